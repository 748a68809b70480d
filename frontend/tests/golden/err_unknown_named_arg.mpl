param bytes = 1024
send(to: 1, bytes: bytes, tga: 7)
recv(form: 0, bytes: bytes)
