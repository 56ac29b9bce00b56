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
//! Two refusals stay inside the flow level, where the facts they need are at hand: a Jellyfish path longer than
//! the flow level holds (known only once the flow's path is drawn), and RAX with a bounded send buffer (checked
//! as the level sets up its tags).

use crate::config::{
    CheckPoint, Config, ConfigError, Connections, FamilyName, HomaSizes, Level, QclimbInfo, SchemeName, TopologyConfig,
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
/// columns' own consistency ([`FlowSet::validate`]), then the columns a scheme reads (QCLIMB's bounds, Homa's
/// estimates or bounds, connection ids for `transport.connections = "trace"`), and what a level or family cannot
/// take (source routes, data generation rates). [`crate::run`] calls it; the levels themselves trust their flows
/// beyond [`FlowSet::validate`]. The first fault found is reported, in the order the checks are listed here.
pub fn flows(cfg: &Config, flows: &FlowSet) -> Result<(), FlowError> {
    flows.validate(cfg.topology.hosts())?;
    let name = cfg.scheme.name;
    match cfg.run.level {
        Level::Flow => {
            if flows.path.iter().any(|&p| p != NO_PATH) {
                return Err(FlowError("flows: the flow level does not take source routes (the trace's path column)".into()));
            }
            if flows.gen_rate_bps.iter().any(|&r| r != NO_RATE) {
                return Err(FlowError(
                    "run.level = \"flow\": flows with a data generation rate (gen_rate_bps) are not modelled at the \
                     flow level yet; run them at the packet level"
                        .into(),
                ));
            }
            qclimb_bounds(cfg, flows)
        }
        Level::Packet => {
            qclimb_bounds(cfg, flows)?;
            if cfg.transport.connections == Connections::Trace && flows.conn.len() != flows.len() {
                return Err(FlowError(
                    "flows: transport.connections = \"trace\" needs a connection id for every flow (the trace's \
                     `conn` column)"
                        .into(),
                ));
            }
            let family = name.family();
            if family != FamilyName::Tcp && flows.path.iter().any(|&p| p != NO_PATH) {
                return Err(FlowError(format!(
                    "flows: scheme {} does not take source routes (the trace's path column); the TCP family's \
                     strict-priority schemes do{}",
                    name.as_str(),
                    if name == SchemeName::Hyline { " (HyLine's manager routes its flows itself)" } else { "" }
                )));
            }
            if family != FamilyName::Tcp && flows.gen_rate_bps.iter().any(|&r| r != NO_RATE) {
                return Err(FlowError(format!(
                    "flows: scheme {} does not model data generation rates (gen_rate_bps); the TCP-family schemes do",
                    name.as_str()
                )));
            }
            match family {
                FamilyName::Tcp if !flows.path.is_empty() => {
                    if name.rank_queue() {
                        return Err(FlowError(format!(
                            "flows: scheme {} cannot take source routes (the trace's path column): its packets' rank \
                             field is where routes ride; strict-priority schemes can",
                            name.as_str()
                        )));
                    }
                    // every route must be a path of the fabric as built (the seed does not change the fabric)
                    let net: Network = Network::build(cfg, 0);
                    route::route_codes(&net, flows)?;
                }
                FamilyName::Homa => {
                    let needs = |col: &Vec<u64>, what: &str| {
                        if col.len() == flows.len() {
                            Ok(())
                        } else {
                            Err(FlowError(format!(
                                "flows: scheme homa with scheme.homa_sizes = \"{what}\" needs {what}_bytes for every flow"
                            )))
                        }
                    };
                    match cfg.scheme.homa_sizes {
                        HomaSizes::Exact => {}
                        HomaSizes::Estimate => needs(&flows.estimate_bytes, "estimate")?,
                        HomaSizes::Lower => needs(&flows.lower_bytes, "lower")?,
                        HomaSizes::Upper => needs(&flows.upper_bytes, "upper")?,
                    }
                }
                _ => {}
            }
            Ok(())
        }
    }
}

/// QCLIMB with bounds reads both bounds of every flow (at either level).
fn qclimb_bounds(cfg: &Config, flows: &FlowSet) -> Result<(), FlowError> {
    if cfg.scheme.name == SchemeName::Qclimb && cfg.scheme.qclimb_info == QclimbInfo::Bounds && !flows.has_bounds() {
        return Err(FlowError(
            "flows: scheme qclimb with scheme.qclimb_info = \"bounds\" needs lower_bytes and upper_bytes for every \
             flow (a trace annotated by `fctlab predict annotate`)"
                .into(),
        ));
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
        let e = config_from_json(r#"{"scheme": {"name": "homa"}, "run": {"level": "flow"}}"#).unwrap_err();
        assert_eq!(e.key, "run.level");
        assert!(e.message.starts_with("scheme homa has no flow-level model yet (the flow level has: tcp, dctcp,"), "{e}");
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
        Config::from_json(r#"{"scheme": {"name": "homa"}, "run": {"level": "flow"}}"#).unwrap();
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
            config_from_json(&format!(r#"{{"run": {{"level": "flow"{extra}}}, "scheme": {{"name": "homa"}},
                "topology": {{"kind": "bcube", "k": 3}}, "link_loss": {{"probability": 0.5}}}}"#))
            .unwrap_err()
            .key
        };
        assert_eq!(flow(r#", "monitor_host": 0"#), "run.level");
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

    #[test]
    fn rate_params_read_the_pdq_keys() {
        let c = config_from_json(r#"{"scheme": {"name": "pdq", "pdq_probe_factor": 0.5, "pdq_list_max": 16}}"#).unwrap();
        let p = crate::transport::rate::RateParams::from_config(&c);
        assert_eq!((p.probe_factor, p.list_max, p.list_min), (0.5, 16, 8));
    }
}
