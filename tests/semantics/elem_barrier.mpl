// A barrier moves no data and takes no `elem:` (an input error, exit code 1).
// snapshot: run --ranks 2
barrier(elem: 4)
