//! The profile-guided optimisation's training inputs (benchmarks/pgo/, run by scripts/pgo.sh) still parse and
//! run: if one stopped doing so, the install would quietly fall back to a build without the profile.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn every_training_scenario_runs_in_fctlab_bench() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../benchmarks/pgo");
    let flows = std::fs::read_to_string(dir.join("flows-websearch-144hosts-1000.csv"))
        .expect("training flows");
    assert_eq!(flows.lines().next(), Some("src,dst,size_bytes,start_ps"));
    assert_eq!(flows.lines().count(), 1001, "1000 flows and a header");
    // the first 100 flows are enough to check that a scenario runs
    let head: Vec<&str> = flows.lines().take(101).collect();
    let small = std::env::temp_dir().join(format!("fctlab-pgo-flows-{}.csv", std::process::id()));
    std::fs::write(&small, head.join("\n") + "\n").unwrap();
    let mut configs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    configs.sort();
    let names: Vec<String> = configs
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "d3", "dctcp", "flow-dctcp", "flow-pdq", "flow-pfabric", "flow-pias", "homa", "hyline", "pdq",
            "pfabric", "pias", "qclimb", "qjump", "rcp", "tcp-ecmp-shared"
        ]
    );
    for cfg in &configs {
        for threads in ["1", "2"] {
            let out = Command::new(env!("CARGO_BIN_EXE_fctlab-bench"))
                .arg(cfg)
                .arg(&small)
                .arg(threads)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}: {}",
                cfg.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(stats["flows_finished"], 100, "{}", cfg.display());
        }
    }
    std::fs::remove_file(&small).ok();
}
