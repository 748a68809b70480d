//! The eager limit of the four Alaska osu_latency tables (OSU 5.6.2, 2
//! ranks on 2 nodes, ConnectX-4: InfiniBand and RoCE under Open MPI 4.0.3
//! over UCX and Intel MPI 2019.7 over libfabric verbs), from the shared
//! data beside the workspace (`../shared/validation/alaska`). Absent, each
//! test is skipped with a note, or fails under CI=true or with
//! PARSIM_REQUIRE_SHARED set (the convention of the root tests'
//! `support::shared_data`).

use calibrate::{
    ChannelFit, ChannelOptions, EagerOrigin, InputOptions, calibrate_channel, parse_table,
};

fn fit(environment: &str) -> Option<ChannelFit> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/validation/alaska")
        .join(environment)
        .join("omb/Osu_latency/rfm_Osu_latency_job.out");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => {
            let why = if std::env::var("CI").is_ok_and(|v| v == "true") {
                Some("CI=true")
            } else if std::env::var_os("PARSIM_REQUIRE_SHARED").is_some() {
                Some("PARSIM_REQUIRE_SHARED is set")
            } else {
                None
            };
            if let Some(why) = why {
                panic!("needs {} ({err}), and {why}", path.display());
            }
            eprintln!(
                "note: skipped: needs {} ({err}; with CI=true or PARSIM_REQUIRE_SHARED set this is a failure)",
                path.display()
            );
            return None;
        }
    };
    let table = parse_table(&text, &InputOptions::default()).expect("the osu_latency table parses");
    Some(calibrate_channel(&table, &ChannelOptions::default()).expect("fits"))
}

/// The limit is a boundary of the fit: the segment from it is the first
/// rendezvous one, its first measured size at or above the limit and the
/// size before it below; returns the measured sizes on either side.
fn at_a_boundary(fit: &ChannelFit, report: &str) -> (u64, u64) {
    let index = fit
        .segments
        .iter()
        .position(|s| s.from == fit.eager_limit)
        .unwrap_or_else(|| panic!("no segment starts at the eager limit\n{report}"));
    let segment = &fit.segments[index];
    assert!(index > 0 && segment.rendezvous, "{report}");
    assert!(!fit.segments[index - 1].rendezvous, "{report}");
    let below = fit.points[segment.first - 1].bytes;
    let above = fit.points[segment.first].bytes;
    assert!(
        below < fit.eager_limit && fit.eager_limit <= above,
        "{report}"
    );
    (below, above)
}

/// Open MPI over UCX: the eager and rendezvous lines cross (UCX's
/// automatic threshold), between 8 and 16 KiB on InfiniBand and between
/// 4 and 8 KiB on RoCE; before, no step was found and every size up to
/// 4 MiB was eager.
#[test]
fn openmpi_ucx_switches_where_the_lines_cross() {
    for (environment, sizes, max_error) in [
        ("ib-gcc9-openmpi4-ucx", (8192, 16384), 0.06),
        ("roce-gcc9-openmpi4-ucx", (4096, 8192), 0.01),
    ] {
        let Some(fit) = fit(environment) else {
            return;
        };
        let report = calibrate::report::text("network", &fit);
        let report = format!("{environment}:\n{report}");
        assert_eq!(at_a_boundary(&fit, &report), sizes, "{report}");
        let EagerOrigin::Crossing {
            rise,
            slope_below,
            slope_above,
            handshake,
        } = fit.eager_origin
        else {
            panic!("{report}");
        };
        assert!((0.5..=2.0).contains(&(rise / handshake)), "{report}");
        assert!(slope_above <= 0.75 * slope_below, "{report}");
        assert!(fit.summary().max < max_error, "{report}");
        assert!(
            !report.contains("no eager-to-rendezvous switch"),
            "{report}"
        );
    }
}

/// Intel MPI over libfabric verbs: a step of about 10 handshakes at
/// 256 KiB with the time per byte kept (found before, unchanged); the
/// earlier bend at 13-16 KiB is not taken, since the step is tried first.
#[test]
fn intel_mpi_steps_at_256_kib() {
    for environment in ["ib-gcc9-impi-verbs", "roce-gcc9-impi-verbs"] {
        let Some(fit) = fit(environment) else {
            return;
        };
        let report = calibrate::report::text("network", &fit);
        let report = format!("{environment}:\n{report}");
        assert_eq!(fit.eager_limit, 262144, "{report}");
        assert!(
            matches!(fit.eager_origin, EagerOrigin::Detected { .. }),
            "{report}"
        );
        assert_eq!(at_a_boundary(&fit, &report), (131072, 262144), "{report}");
    }
}
