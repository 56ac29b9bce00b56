//! The checks of a configuration that need more than the configuration: the topology as built (a Jellyfish draw
//! must be connected) and what a level can run (the flow level's models and the longest path it holds).
//!
//! `config` is the crate's ground floor and imports nothing above `units`; these checks need the fabric's
//! builders and the levels, so they live here, above both levels. They run at their places in the range
//! checks ([`Config::validate_with`] calls them at each [`CheckPoint`]), so a config with several faults reports
//! the same first one, with the same key and message, as when the config checked everything itself. Read a
//! user's config with [`config_from_json`]; [`Config::from_json`] alone leaves these checks out.

use crate::config::{CheckPoint, Config, ConfigError, TopologyConfig};
use crate::flowlevel;
use crate::net::jellyfish;

/// Parse, range-check and check a config against the fabric and the levels: what every front end reads a
/// config with. The error names the key.
pub fn config_from_json(text: &str) -> Result<Config, ConfigError> {
    Config::from_json_with(text, deeper)
}

/// Every check of a config built in code: [`Config::validate`] and those of this module.
pub fn check(cfg: &Config) -> Result<(), ConfigError> {
    cfg.validate_with(deeper)
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
                let have: Vec<&str> = flowlevel::SCHEMES.iter().map(|s| s.0).collect();
                return err(
                    "run.level",
                    format!(
                        "scheme {} has no flow-level model yet (the flow level has: {})",
                        name.as_str(),
                        have.join(", ")
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
    use crate::config::SCHEMES;

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

    /// The rows' flow-level facts agree with the flow level's own tables (until it reads the rows).
    #[test]
    fn rows_agree_with_the_flow_level() {
        for row in &SCHEMES {
            assert_eq!(flowlevel::supports(row.scheme), row.flow_level.is_some(), "{}", row.name);
            let text = flowlevel::SCHEMES.iter().find(|s| s.0 == row.name).map(|s| s.1);
            assert_eq!(text, row.flow_level.map(|f| f.text), "{}", row.name);
        }
    }

    #[test]
    fn rate_params_read_the_pdq_keys() {
        let c = config_from_json(r#"{"scheme": {"name": "pdq", "pdq_probe_factor": 0.5, "pdq_list_max": 16}}"#).unwrap();
        let p = crate::transport::rate::RateParams::from_config(&c);
        assert_eq!((p.probe_factor, p.list_max, p.list_min), (0.5, 16, 8));
    }
}
