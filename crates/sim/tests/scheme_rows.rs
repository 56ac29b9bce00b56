//! Every scheme has exactly one row in `config::SCHEMES`, and the row and the name agree both ways.

use fctlab_sim::config::{SchemeName, SCHEMES};

/// The names serde knows for `SchemeName`, from its error for an unknown one (independent of the rows).
fn serde_names() -> Vec<String> {
    let e = serde_json::from_str::<SchemeName>("\"no-such-scheme\"").unwrap_err().to_string();
    let list = e.split("expected one of ").nth(1).expect("serde lists the variants");
    let list = list.split(" at line").next().unwrap();
    list.split(", ").map(|n| n.trim_matches('`').to_string()).collect()
}

#[test]
fn every_scheme_name_has_exactly_one_row() {
    let names = serde_names();
    assert_eq!(names.len(), SCHEMES.len(), "{names:?}");
    for name in &names {
        let rows = SCHEMES.iter().filter(|r| r.name == name).count();
        assert_eq!(rows, 1, "scheme {name} has {rows} rows");
    }
}

#[test]
fn names_are_unique_and_round_trip() {
    for (i, row) in SCHEMES.iter().enumerate() {
        assert!(SCHEMES[..i].iter().all(|r| r.name != row.name && r.scheme != row.scheme), "{} twice", row.name);
        let parsed: SchemeName = serde_json::from_value(serde_json::json!(row.name)).unwrap();
        assert_eq!(parsed, row.scheme, "{}", row.name);
        assert_eq!(parsed.row().name, row.name);
        assert_eq!(row.scheme.as_str(), row.name);
        assert_eq!(serde_json::to_value(row.scheme).unwrap(), serde_json::json!(row.name));
        assert_eq!(SchemeName::ALL[i], (row.name, row.summary));
        assert!(!row.summary.is_empty());
    }
}

#[test]
fn rows_serialize_with_every_field() {
    let rows = serde_json::to_value(SCHEMES).unwrap();
    let first = rows[0].as_object().unwrap();
    for key in [
        "name", "summary", "family", "protocol", "tagging", "rank_queue", "flow_level", "window", "setup_rtts",
        "needs_thresholds", "presets", "keys",
    ] {
        assert!(first.contains_key(key), "{key} missing");
    }
    assert_eq!(rows[0]["flow_level"]["model"], "max_min");
}
