//! The sample benchmark outputs in `tests/data/` (written in the exact
//! formats of IMB-MPI1 2019 and OSU Micro-Benchmarks 7.x) parse, fit and
//! make machine files.

use std::path::PathBuf;

use calibrate::{
    ChannelFit, ChannelOptions, Format, InputOptions, MachineDescription, Measure,
    calibrate_channel, parse_table, write_machine,
};

/// A machine of one channel, `network`, and nothing else: one rank per
/// node, no shared memory, defaults everywhere.
fn sample_machine<'a>(name: &str, network: &'a ChannelFit) -> MachineDescription<'a> {
    MachineDescription {
        name: name.into(),
        description: "sample".into(),
        ranks_per_node: 1,
        cpu_rate: 1.0,
        memcpy: 1e9,
        network,
        shm: None,
        socket: None,
        sockets: 1,
        header: Vec::new(),
        network_duplex: None,
        shm_duplex: None,
        collectives: Vec::new(),
        node_gap: 0.0,
        shm_node_bandwidth: None,
        reduce_bandwidth: None,
        reduce_overhead: 0.0,
        memcpy_segments: Vec::new(),
        reduce_segments: Vec::new(),
        timer: 0.0,
        rendezvous_send_received: false,
        flag_latency: None,
        datatype: models::DatatypeCosts::default(),
        page_fault: None,
        written: calibrate::Written::default(),
    }
}

fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn imb_2019_pingpong() {
    let text = data("imb2019_pingpong.txt");
    assert_eq!(Format::detect(&text), Some(Format::Imb));
    let table = parse_table(&text, &InputOptions::default()).expect("parses");
    assert_eq!(table.points.len(), 24);
    assert_eq!(table.points[0].bytes, 0);
    assert_eq!(table.points[23].bytes, 4_194_304);
    approx::assert_relative_eq!(table.points[23].seconds, 681.50e-6);
    assert!(
        table.origin.contains("PingPong, 2 processes"),
        "{}",
        table.origin
    );
    // The other benchmarks of the same file.
    let pingping = InputOptions {
        benchmark: Some("PingPing".into()),
        ..InputOptions::default()
    };
    let table = parse_table(&text, &pingping).expect("parses");
    approx::assert_relative_eq!(table.points[0].seconds, 1.21e-6);
    let sendrecv4 = InputOptions {
        benchmark: Some("Sendrecv".into()),
        processes: Some(4),
        time_col: Some("t_max[usec]".into()),
        ..InputOptions::default()
    };
    let table = parse_table(&text, &sendrecv4).expect("parses");
    approx::assert_relative_eq!(table.points[0].seconds, 1.59e-6, max_relative = 1e-9);
}

#[test]
fn osu_7_latency_and_bw() {
    let text = data("osu7_latency.txt");
    assert_eq!(Format::detect(&text), Some(Format::OsuLatency));
    let table = parse_table(&text, &InputOptions::default()).expect("parses");
    assert_eq!(table.measure, Measure::PingPong);
    assert_eq!(table.points.len(), 23);
    assert_eq!(table.points[0].bytes, 1);
    approx::assert_relative_eq!(table.points[0].seconds, 1.62e-6);
    let text = data("osu7_bw.txt");
    assert_eq!(Format::detect(&text), Some(Format::OsuBw));
    let table = parse_table(&text, &InputOptions::default()).expect("parses");
    assert_eq!(table.measure, Measure::Stream);
    // 4 MiB at 12083.52 MB/s.
    approx::assert_relative_eq!(
        table.points[22].seconds,
        4_194_304.0 / 12_083.52e6,
        max_relative = 1e-12
    );
}

#[test]
fn samples_fit_within_tolerance() {
    for name in ["imb2019_pingpong.txt", "osu7_latency.txt"] {
        let table = parse_table(&data(name), &InputOptions::default()).expect("parses");
        let fit = calibrate_channel(&table, &ChannelOptions::default()).expect("fits");
        let summary = fit.summary();
        assert!(fit.within_tolerance, "{name}: {summary:?}");
        assert!(summary.max <= 0.05, "{name}: {summary:?}");
        let machine = MachineDescription {
            header: vec!["a sample".into()],
            network_duplex: Some(models::Duplex::HALF),
            collectives: vec![("alltoall".into(), "pairwise".into())],
            // The same fit as the written one: the section round-trips.
            written: calibrate::Written {
                network: Some(&fit),
                ..Default::default()
            },
            ..sample_machine(name, &fit)
        };
        let toml = write_machine(&machine).expect("writes");
        assert!(toml.contains("model = \"hardware\""), "{toml}");
        assert!(toml.contains("[network]"), "{toml}");
        assert!(toml.contains("duplex = \"half\""), "{toml}");
        assert!(
            toml.contains("[collectives]\nalltoall = \"pairwise\""),
            "{toml}"
        );
        // The models crate reads what the writer writes, segments included.
        let read = models::LogGpMachine::from_toml_str(&toml, name)
            .unwrap_or_else(|e| panic!("{name}: {e}\n{toml}"));
        assert!(toml.contains("[network.written]"), "{toml}");
        let network = &read.spec().network;
        let written = network.written.as_deref().expect("a written channel");
        assert_eq!(written.segments.len(), fit.segments.len() - 1, "{name}");
        assert_eq!(written.params_for(1 << 20), network.params_for(1 << 20));
        assert_eq!(written.eager_limit, network.eager_limit);
    }
    // A shared-memory channel whose segments have their own duplex (the
    // joint fit's per-segment overlap) and whose channel duplex is full
    // (not written): written with `duplex_scope = "rank"`, so it loads
    // (before, `[shm]` refused the segment's duplex and `calibrate net
    // --buffers written` failed on this machine's bound runs).
    let table = parse_table(&data("osu7_latency.txt"), &InputOptions::default()).expect("parses");
    let mut shm = calibrate_channel(&table, &ChannelOptions::default()).expect("fits");
    assert!(shm.segments.len() >= 2, "{:?}", shm.segments.len());
    shm.segments[1].duplex = Some(models::Duplex::HALF);
    let machine = MachineDescription {
        ranks_per_node: 2,
        shm: Some(&shm),
        ..sample_machine("shm", &shm)
    };
    let toml = write_machine(&machine).expect("writes");
    assert!(toml.contains("duplex_scope = \"rank\""), "{toml}");
    let read =
        models::LogGpMachine::from_toml_str(&toml, "shm").unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let shm_read = read.spec().shm.as_ref().expect("a shared-memory channel");
    assert_eq!(shm_read.segments[0].duplex, Some(models::Duplex::HALF));
    let bw = parse_table(&data("osu7_bw.txt"), &InputOptions::default()).expect("parses");
    let options = ChannelOptions {
        latency: Some(1.0e-6),
        ..ChannelOptions::default()
    };
    let fit = calibrate_channel(&bw, &options).expect("fits");
    assert!(fit.summary().max <= 0.05, "{:?}", fit.summary());
}
