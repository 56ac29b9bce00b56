//! The checks of a configuration that need more than the configuration: the topology as built (a Jellyfish draw
//! must be connected) and what a level can run (the flow level's models and the longest path it holds); and
//! the checks of the flows against what the scheme and the level read of them ([`flows`]).
//!
//! `config` is the crate's ground floor and imports nothing above `units`; these checks need the fabric's
//! builders and the levels, so they live here, above both levels. They run at their places in the range
//! checks ([`Config::validate_with`] calls them at each [`CheckPoint`]), so a config with several faults reports
//! the same first one, with the same key and message, as when the config checked everything itself. Read a
//! user's config with [`config_from_json`]; [`Config::from_json`] alone leaves these checks out.
//!
//! Every refusal of a config or of flows is here, before a run starts: the levels themselves only assert what
//! these checks have made sure of (a Jellyfish path longer than the flow level holds, RAX with a bounded send
//! buffer at the flow level, a flow with more segments than its family counts).

use crate::config::{
    CheckPoint, Config, ConfigError, Connections, FamilyName, Level, SchemeName,
    TopologyConfig,
};
use crate::flowlevel;
use crate::flows::{FlowError, FlowSet, NO_PATH, NO_RATE};
use crate::net::{jellyfish, route, Network};

/// Parse, range-check and check a config against the fabric and the levels: what every front end reads a
/// config with. The error names the key. Keys in the fabric's terms (RTTs, BDPs) come back resolved into their
/// absolute keys (`net::scale::resolve`), range-checked again.
pub fn config_from_json(text: &str) -> Result<Config, ConfigError> {
    let mut cfg = Config::from_json_with(text, deeper)?;
    if crate::net::scale::resolve(&mut cfg).is_some() {
        cfg.validate()?;
    }
    Ok(cfg)
}

/// Every check of a config built in code: [`Config::validate`] and those of this module.
pub fn check(cfg: &Config) -> Result<(), ConfigError> {
    cfg.validate_with(deeper)
}

/// Check `flows` against what the run's scheme and level need of them, before anything is simulated: the
/// columns' own consistency ([`FlowSet::validate`]), the largest flow the level and family can count
/// ([`max_flow_bytes`]), then the columns a scheme reads (QCLIMB's bounds or estimates, pFabric's and Homa's
/// estimates or bounds, connection ids for `transport.connections = "trace"`), and what a level or family cannot
/// take (source routes, data generation rates, at the flow level a path longer than it holds). [`crate::run`]
/// calls it, and the front ends call it before they start a run (so that a fault is reported as bad input,
/// naming the file's row and column from the error's [`crate::flows::FlowCell`]); the levels trust their flows.
/// The first fault found is reported, in the order the checks are listed here.
pub fn flows(cfg: &Config, flows: &FlowSet) -> Result<(), FlowError> {
    flows.validate(cfg.topology.hosts())?;
    let name = cfg.scheme.name;
    let most = max_flow_bytes(cfg);
    if let Some(i) = flows.size_bytes.iter().position(|&b| b > most) {
        return Err(FlowError::at(
            Some(i),
            "size_bytes",
            format!(
                "{} bytes is more than scheme {} counts at {} (at most {most} bytes{})",
                flows.size_bytes[i],
                name.as_str(),
                level_name(cfg),
                max_flow_why(cfg)
            ),
            format!(
                "flow {i} has size_bytes {}, more than scheme {} counts at {} (at most {most} bytes{})",
                flows.size_bytes[i],
                name.as_str(),
                level_name(cfg),
                max_flow_why(cfg)
            ),
        ));
    }
    estimates(cfg, flows)?;
    match cfg.run.level {
        Level::Flow => {
            if let Some(i) = flows.path.iter().position(|&p| p != NO_PATH) {
                return Err(FlowError::at(
                    Some(i),
                    "path",
                    "the flow level does not take source routes; run at the packet level or set the cell to -1 \
                     (ECMP)",
                    "flows: the flow level does not take source routes (the trace's path column)",
                ));
            }
            if let Some(i) = flows.gen_rate_bps.iter().position(|&r| r != NO_RATE) {
                return Err(FlowError::at(
                    Some(i),
                    "gen_rate_bps",
                    "run.level = \"flow\": data generation rates are not modelled at the flow level yet; run at the \
                     packet level",
                    "run.level = \"flow\": flows with a data generation rate (gen_rate_bps) are not modelled at the \
                     flow level yet; run them at the packet level",
                ));
            }
            flow_level_paths(cfg, flows)
        }
        Level::Packet => {
            if cfg.transport.connections == Connections::Trace && flows.conn.len() != flows.len() {
                return Err(FlowError::at(
                    None,
                    "conn",
                    "transport.connections = \"trace\" needs a connection id for every flow",
                    "flows: transport.connections = \"trace\" needs a connection id for every flow (the trace's \
                     `conn` column)",
                ));
            }
            let family = name.family();
            if family != FamilyName::Tcp {
                if let Some(i) = flows.path.iter().position(|&p| p != NO_PATH) {
                    let why = format!(
                        "scheme {} does not take source routes; the TCP family's strict-priority schemes do{}",
                        name.as_str(),
                        if name == SchemeName::Hyline { " (HyLine's manager routes its flows itself)" } else { "" }
                    );
                    return Err(FlowError::at(
                        Some(i),
                        "path",
                        why.clone(),
                        format!("flows: {why} (the trace's path column)"),
                    ));
                }
                if let Some(i) = flows.gen_rate_bps.iter().position(|&r| r != NO_RATE) {
                    let why = format!(
                        "scheme {} does not model data generation rates; the TCP-family schemes do",
                        name.as_str()
                    );
                    return Err(FlowError::at(
                        Some(i),
                        "gen_rate_bps",
                        why.clone(),
                        format!("flows: {why} (gen_rate_bps)"),
                    ));
                }
            }
            match family {
                FamilyName::Tcp if !flows.path.is_empty() => {
                    if name.rank_queue() {
                        if let Some(i) = flows.path.iter().position(|&p| p != NO_PATH) {
                            let why = format!(
                                "scheme {} cannot take source routes: its packets' rank field is where routes ride; \
                                 strict-priority schemes can",
                                name.as_str()
                            );
                            return Err(FlowError::at(
                                Some(i),
                                "path",
                                why.clone(),
                                format!("flows: {why} (the trace's path column)"),
                            ));
                        }
                    }
                    // every route must be a path of the fabric as built (the seed does not change the fabric)
                    let net: Network = Network::build(cfg, 0);
                    route::route_codes(&net, flows)?;
                }
                _ => {}
            }
            Ok(())
        }
    }
}

fn level_name(cfg: &Config) -> &'static str {
    match cfg.run.level {
        Level::Packet => "the packet level",
        Level::Flow => "the flow level",
    }
}

/// The largest flow (bytes) a run of `cfg` can simulate. At the packet level every family numbers a flow's
/// segments in 32 bits (two numbers kept back as markers), so a flow has at most 2^32 - 3 segments of
/// `transport.mss_bytes` (about 6.3 TB at the default 1,460 B). The flow level counts bits in floating point and
/// time in 64-bit picoseconds: a flow is held to the same segment count, so both levels take the same flows and
/// its transfer, about 2^65 bits at most, ends within the clock at every host link rate the config allows.
pub fn max_flow_bytes(cfg: &Config) -> u64 {
    (u32::MAX as u64 - 2) * cfg.transport.mss_bytes as u64
}

fn max_flow_why(cfg: &Config) -> String {
    format!(": 2^32 - 3 segments of transport.mss_bytes = {}", cfg.transport.mss_bytes)
}

/// A scheme told to read estimated sizes or bounds needs them, for every flow: the columns its information
/// ([`crate::config::SchemeConfig::size_view`]: `scheme.size_info`, or pFabric's `rank = "estimate"`, Homa's
/// `homa_sizes`, QCLIMB's `qclimb_info`) reads. Without them the run would use the true sizes, i.e. be the
/// exact-size scheme under another name. The error names the first column missing.
fn estimates(cfg: &Config, flows: &FlowSet) -> Result<(), FlowError> {
    let sc = &cfg.scheme;
    let info = sc.size_view();
    let name = sc.name.as_str();
    let what = match (sc.size_info, sc.name) {
        (Some(i), _) => format!("scheme {name} with scheme.size_info = \"{}\"", i.as_str()),
        (None, SchemeName::Pfabric) => "scheme pfabric with scheme.rank = \"estimate\"".to_string(),
        (None, SchemeName::Homa) => format!("scheme homa with scheme.homa_sizes = \"{}\"", info.as_str()),
        (None, SchemeName::Qclimb) => {
            let v = serde_json::to_value(sc.qclimb_info).map(|v| v.to_string()).unwrap_or_default();
            format!("scheme qclimb with scheme.qclimb_info = {v}")
        }
        (None, _) => format!("scheme {name}"),
    };
    let need = info.columns().join(" and ");
    for &column in info.columns() {
        let have = match column {
            "estimate_bytes" => flows.estimate_bytes.len(),
            "lower_bytes" => flows.lower_bytes.len(),
            _ => flows.upper_bytes.len(),
        };
        if have != flows.len() {
            return Err(FlowError::at(
                None,
                column,
                format!("{what} needs {need} for every flow (without it the run would use the true sizes)"),
                format!(
                    "flows: {what} needs {need} for every flow (a trace annotated by `fctlab predict annotate`, or \
                     a workload with a size_error model); without it the run would use the true sizes"
                ),
            ));
        }
    }
    Ok(())
}

/// The flow level holds at most [`flowlevel::MAX_HOPS`] ports on a flow's path. BCube's paths are bounded by
/// `topology.k` (checked with the config); a Jellyfish graph's are known once it is drawn: a flow's ports are
/// those of a shortest path between its hosts (ECMP's and spraying's paths alike), counted here per pair of hosts.
fn flow_level_paths(cfg: &Config, flows: &FlowSet) -> Result<(), FlowError> {
    if !matches!(cfg.topology, TopologyConfig::Jellyfish(_)) {
        return Ok(());
    }
    let net: Network = Network::build(cfg, 0);
    let mut seen: std::collections::HashMap<(u32, u32), usize> = std::collections::HashMap::new();
    for i in 0..flows.len() {
        let (src, dst) = (flows.src[i], flows.dst[i]);
        let ports = *seen.entry((src, dst)).or_insert_with(|| net.ecmp_path(src, dst, 0).len());
        if ports > flowlevel::MAX_HOPS {
            let why = format!(
                "host {src} to host {dst} crosses {ports} ports; the flow level takes at most {}: this Jellyfish \
                 graph is too wide; give its switches more network ports (topology.network_ports) or use fewer \
                 switches (topology.switches), or run it at the packet level",
                flowlevel::MAX_HOPS
            );
            return Err(FlowError::at(Some(i), "dst", why.clone(), format!("run.level = \"flow\": flow {i}: {why}")));
        }
    }
    Ok(())
}

fn err(key: &str, message: String) -> Result<(), ConfigError> {
    Err(ConfigError { key: key.to_string(), message })
}

/// The checks due at `at`.
fn deeper(cfg: &Config, at: CheckPoint) -> Result<(), ConfigError> {
    match at {
        CheckPoint::Topology => {
            if let TopologyConfig::Jellyfish(t) = &cfg.topology {
                if let Err(message) = jellyfish::graph(t) {
                    return err("topology.network_ports", message);
                }
            }
        }
        CheckPoint::FlowLevelScheme => {
            let name = cfg.scheme.name;
            if !flowlevel::supports(name) {
                return err(
                    "run.level",
                    format!(
                        "scheme {} has no flow-level model yet (the flow level has: {})",
                        name.as_str(),
                        flowlevel::supported_names().join(", ")
                    ),
                );
            }
            if matches!(name, SchemeName::Rax | SchemeName::RaxPlus) && cfg.transport.send_buffer_bytes != 0 {
                return err(
                    "transport.send_buffer_bytes",
                    "run.level = \"flow\": RAX's remaining time depends on the bytes written into a bounded send \
                     buffer, which the flow level does not model; use 0 (unbounded)"
                        .into(),
                );
            }
        }
        CheckPoint::FlowLevelPaths => {
            if let TopologyConfig::Bcube(t) = &cfg.topology {
                // a path crosses up to k + 1 switches: 2 (k + 1) ports, and the two internal links
                let ports = 2 * (t.k as usize + 1) + 2;
                if ports > flowlevel::MAX_HOPS {
                    return err(
                        "topology.k",
                        format!(
                            "BCube paths cross up to {ports} ports at k = {}; the flow level takes at most {} \
                             (k <= 2), see run.level",
                            t.k,
                            flowlevel::MAX_HOPS
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moved_checks_keep_their_keys_and_messages() {
        let rax = r#"{"scheme": {"name": "rax"}, "transport": {"send_buffer_bytes": 100000}, "run": {"level": "flow"}}"#;
        let e = config_from_json(rax).unwrap_err();
        assert_eq!(e.key, "transport.send_buffer_bytes");
        assert!(e.message.starts_with("run.level = \"flow\": RAX's remaining time depends"), "{e}");
        let e = config_from_json(r#"{"topology": {"kind": "bcube", "k": 3}, "run": {"level": "flow"}}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "topology.k: BCube paths cross up to 10 ports at k = 3; the flow level takes at most 8 (k <= 2), see \
             run.level"
        );
        let jf = r#"{"topology": {"kind": "jellyfish", "switches": 6, "ports": 3, "network_ports": 1}}"#;
        assert_eq!(config_from_json(jf).unwrap_err().key, "topology.network_ports");
        // Config::from_json alone leaves them out
        Config::from_json(jf).unwrap();
        Config::from_json(rax).unwrap();
        assert!(check(&Config::from_json(jf).unwrap()).is_err());
    }

    #[test]
    fn the_first_fault_is_the_same_as_before() {
        // a disconnected Jellyfish with a bad switch section: the topology comes first
        let jf = r#"{"topology": {"kind": "jellyfish", "switches": 6, "ports": 3, "network_ports": 1},
                     "switch": {"queues": 0}}"#;
        assert_eq!(config_from_json(jf).unwrap_err().key, "topology.network_ports");
        // at the flow level: the scheme, then the monitor, then BCube's paths, then the later range checks
        let flow = |extra: &str| {
            config_from_json(&format!(r#"{{"run": {{"level": "flow"{extra}}}, "scheme": {{"name": "rax"}},
                "transport": {{"send_buffer_bytes": 100000}}, "topology": {{"kind": "bcube", "k": 3}},
                "link_loss": {{"probability": 0.5}}}}"#))
            .unwrap_err()
            .key
        };
        assert_eq!(flow(r#", "monitor_host": 0"#), "transport.send_buffer_bytes");
        let e = config_from_json(
            r#"{"run": {"level": "flow", "monitor_host": 0}, "topology": {"kind": "bcube", "k": 3},
                "scheme": {"rax_base": 0.5}}"#,
        )
        .unwrap_err();
        assert_eq!(e.key, "run.monitor_host");
        let e = config_from_json(r#"{"run": {"level": "flow"}, "topology": {"kind": "bcube", "k": 3}, "scheme": {"rax_base": 0.5}}"#)
            .unwrap_err();
        assert_eq!(e.key, "topology.k");
    }

    fn one_flow() -> FlowSet {
        FlowSet { src: vec![0], dst: vec![1], size_bytes: vec![1_000], start_ps: vec![0], ..FlowSet::default() }
    }

    /// pFabric by estimate and QCLIMB by a point estimate without estimates would be the exact-size schemes
    /// (bit-identical results): refused, naming the column; with the column they run.
    #[test]
    fn estimated_sizes_need_their_column() {
        for (scheme, key) in [
            (r#"{"name": "pfabric", "rank": "estimate"}"#, "rank"),
            (r#"{"name": "qclimb", "qclimb_info": "point_fixed", "thresholds_bytes": [1,2,3,4,5,6,7]}"#, "qclimb_info"),
            (r#"{"name": "qclimb", "qclimb_info": "point_climb", "thresholds_bytes": [1,2,3,4,5,6,7]}"#, "qclimb_info"),
        ] {
            for level in ["packet", "flow"] {
                let cfg = config_from_json(&format!(r#"{{"scheme": {scheme}, "run": {{"level": "{level}"}}}}"#)).unwrap();
                let e = flows(&cfg, &one_flow()).unwrap_err();
                assert!(e.message.contains(key) && e.message.contains("true sizes"), "{e}");
                assert_eq!(e.cell.map(|c| (c.flow, c.column)), Some((None, "estimate_bytes")));
                flows(&cfg, &FlowSet { estimate_bytes: vec![500], ..one_flow() }).unwrap();
            }
        }
        // the default rank reads no estimate
        flows(&config_from_json(r#"{"scheme": {"name": "pfabric"}}"#).unwrap(), &one_flow()).unwrap();
    }

    /// A flow is refused past 2^32 - 3 segments, at the first flow over, naming its size cell; RAX with a bounded
    /// send buffer at the flow level is refused with the config.
    #[test]
    fn flows_too_large_to_count_and_rax_buffers_are_refused_before_the_run() {
        let cfg = config_from_json(r#"{"transport": {"mss_bytes": 1000}}"#).unwrap();
        assert_eq!(max_flow_bytes(&cfg), 4_294_967_293_000);
        let mut f = one_flow();
        f.size_bytes = vec![4_294_967_293_000];
        flows(&cfg, &f).unwrap();
        f.size_bytes = vec![4_294_967_293_001];
        let e = flows(&cfg, &f).unwrap_err();
        assert_eq!(e.cell.map(|c| (c.flow, c.column)), Some((Some(0), "size_bytes")));
        let e = config_from_json(r#"{"scheme": {"name": "rax"}, "transport": {"send_buffer_bytes": 1000},
            "run": {"level": "flow"}}"#)
        .unwrap_err();
        assert_eq!(e.key, "transport.send_buffer_bytes");
    }

    #[test]
    fn rate_params_read_the_pdq_keys() {
        let c = config_from_json(r#"{"scheme": {"name": "pdq", "pdq_probe_factor": 0.5, "pdq_list_max": 16}}"#).unwrap();
        let p = crate::transport::rate::RateParams::from_config(&c);
        assert_eq!((p.probe_factor, p.list_max, p.list_min), (0.5, 16, 8));
    }
}
