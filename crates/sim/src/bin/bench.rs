//! `fctlab-bench CONFIG.json FLOWS.csv [THREADS]`: run the engine alone (no Python) on a config and a flow
//! file (`src,dst,size_bytes,start_ps[,priority[,deadline_ps]]` with a header line; an empty priority is none,
//! a deadline is absolute and 0 or empty is none) on THREADS threads (default 1), print the run's stats as JSON. Used to profile the core (perf, callgrind) on the same inputs the Python front
//! would pass. With FCTLAB_BENCH_FCT=PATH it also writes each flow's size, start, finish and whether it
//! gave up to PATH (CSV), to compare the results of two builds.

use fctlab_sim::validate::config_from_json;
use fctlab_sim::FlowSet;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 && args.len() != 4 {
        eprintln!("usage: fctlab-bench CONFIG.json FLOWS.csv [THREADS]");
        return ExitCode::from(2);
    }
    let threads = match args.get(3).map(|t| t.parse::<usize>()) {
        None => 1,
        Some(Ok(t)) if t >= 1 => t,
        _ => {
            eprintln!("THREADS must be a positive integer");
            return ExitCode::from(2);
        }
    };
    let cfg = match std::fs::read_to_string(&args[1]).map_err(|e| e.to_string()).and_then(|t| config_from_json(&t).map_err(|e| e.to_string())) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{}: {e}", args[1]);
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read_to_string(&args[2]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: {e}", args[2]);
            return ExitCode::from(2);
        }
    };
    let mut flows = FlowSet::default();
    for (n, line) in text.lines().enumerate().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let parse = |i: usize| -> Result<u64, String> {
            cols.get(i).ok_or(format!("line {}: missing column {i}", n + 1))?.trim().parse::<u64>().map_err(|e| format!("line {}: {e}", n + 1))
        };
        let row = (|| -> Result<(), String> {
            flows.src.push(parse(0)? as u32);
            flows.dst.push(parse(1)? as u32);
            flows.size_bytes.push(parse(2)?);
            flows.start_ps.push(parse(3)?);
            if cols.len() > 4 && !cols[4].trim().is_empty() {
                flows.priority.push(parse(4)? as u8);
            }
            // (deadlines: the column is filled for every row once any row has one)
            if cols.len() > 5 && !cols[5].trim().is_empty() && parse(5)? > 0 {
                flows.deadline_ps.resize(flows.src.len() - 1, fctlab_sim::flows::NO_DEADLINE);
                flows.deadline_ps.push(parse(5)?);
            }
            Ok(())
        })();
        if let Err(e) = row {
            eprintln!("{}: {e}", args[2]);
            return ExitCode::from(2);
        }
    }
    if !flows.deadline_ps.is_empty() {
        flows.deadline_ps.resize(flows.src.len(), fctlab_sim::flows::NO_DEADLINE);
    }
    match fctlab_sim::run(&cfg, &flows, None, threads) {
        Ok(out) => {
            // (optional: each flow's size and FCT, to compare two builds' results: start_ps,finish_ps as written)
            if let Ok(path) = std::env::var("FCTLAB_BENCH_FCT") {
                let r = &out.results;
                let mut csv = String::from("size_bytes,start_ps,finish_ps,terminated\n");
                for i in 0..flows.src.len() {
                    let t = r.terminated.get(i).copied().unwrap_or(false) as u8;
                    csv += &format!("{},{},{},{t}\n", flows.size_bytes[i], r.start_ps[i], r.finish_ps[i]);
                }
                if let Err(e) = std::fs::write(&path, csv) {
                    eprintln!("{path}: {e}");
                    return ExitCode::from(2);
                }
            }
            println!("{}", serde_json::to_string_pretty(&out.stats).unwrap());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
