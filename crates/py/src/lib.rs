//! The Python binding of fctlab's engine: `fctlab._core`. It only converts: a JSON config and flow columns
//! (numpy arrays) in, result columns (numpy arrays) and a JSON summary out. Errors are mapped here, in one
//! place: a bad config or flow becomes `ValueError` naming the key or flow; a panic inside the engine
//! becomes `RuntimeError` carrying the run's config, never a crash of the interpreter.

use fctlab_sim::config::{Preset, SchemeName, TopologyConfig, SCHEMES};
use fctlab_sim::flows::{ColumnMut, FlowColumn, FLOW_COLUMNS};
use fctlab_sim::{Config, FlowError, FlowResults, FlowSet};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Read a config as every front end does: parsed, range-checked and checked against the fabric and the levels.
fn parse(config_json: &str) -> PyResult<Config> {
    fctlab_sim::validate::config_from_json(config_json).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The engine's default configuration as JSON (the single source of the defaults).
#[pyfunction]
fn defaults() -> String {
    serde_json::to_string(&Config::default()).expect("defaults serialize")
}

/// The JSON Schema of the engine's config sections (`config::config_schema`): each key's type, description
/// (its doc comment), default and allowed values.
#[pyfunction]
fn config_schema() -> String {
    serde_json::to_string(&fctlab_sim::config::config_schema()).expect("schema serializes")
}

/// Default parameters of one topology kind as JSON.
#[pyfunction]
fn default_topology(kind: &str) -> PyResult<String> {
    let text = format!(r#"{{"topology": {{"kind": {}}}}}"#, serde_json::to_string(kind).unwrap());
    let cfg = parse(&text)?;
    Ok(serde_json::to_string(&cfg.topology).unwrap())
}

/// The topology kinds the engine builds.
#[pyfunction]
fn topology_kinds() -> Vec<&'static str> {
    TopologyConfig::KINDS.to_vec()
}

/// The schemes the engine runs: (name, description) pairs.
#[pyfunction]
fn schemes() -> Vec<(&'static str, &'static str)> {
    SchemeName::ALL.to_vec()
}

/// Every scheme's row (`config::SCHEMES`) as a JSON list: each row's every field, plus `tcp_kind`, the
/// `transport.kind` its protocol is (null for the families with a transport of their own).
#[pyfunction]
fn scheme_rows() -> String {
    let rows: Vec<serde_json::Value> = SCHEMES
        .iter()
        .map(|row| {
            let mut v = serde_json::to_value(row).expect("rows serialize");
            v["tcp_kind"] = serde_json::to_value(row.protocol.tcp_kind()).unwrap();
            v
        })
        .collect();
    serde_json::to_string(&rows).unwrap()
}

/// The configuration a scheme runs with when a config gives nothing else (JSON): the engine's defaults with
/// the scheme's published values filled in (`preset`: "native", "pfabric_ns2" or "pias"); keys in the
/// fabric's terms (RTTs, BDPs) are left unresolved.
#[pyfunction]
#[pyo3(signature = (name, preset="native"))]
fn scheme_defaults(name: &str, preset: &str) -> PyResult<String> {
    let text = serde_json::json!({"scheme": {"name": name, "preset": preset}}).to_string();
    // parse the names through the config so that a bad one gets the usual message
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let name: SchemeName = serde_json::from_value(value["scheme"]["name"].clone())
        .map_err(|e| PyValueError::new_err(format!("scheme.name: {e}")))?;
    let preset: Preset = serde_json::from_value(value["scheme"]["preset"].clone())
        .map_err(|e| PyValueError::new_err(format!("scheme.preset: {e}")))?;
    Ok(serde_json::to_string(&Config::for_scheme(name, preset)).unwrap())
}

/// Parse and check a config (ranges, the built fabric, the level); return it with every default filled in.
/// Raises ValueError("key: why").
#[pyfunction]
fn validate_config(config_json: &str) -> PyResult<String> {
    let cfg = parse(config_json)?;
    Ok(serde_json::to_string(&cfg).unwrap())
}

/// Facts about a config's topology: hosts and host link rate (what the load is defined on).
#[pyfunction]
fn topology_info<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let cfg = parse(config_json)?;
    let d = PyDict::new(py);
    d.set_item("hosts", cfg.topology.hosts())?;
    d.set_item("host_link_bps", cfg.topology.host_link_gbps() * 1e9)?;
    d.set_item("kind", cfg.topology.kind())?;
    Ok(d)
}

/// The fabric's yardsticks (`net::scale::fabric_scale`): the longest base RTT in ns, the ports of its path, its
/// BDP in bytes and in full-size packets: what the keys in RTTs and BDPs resolve against.
#[pyfunction]
fn fabric_scale<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let cfg = parse(config_json)?;
    let s = fctlab_sim::net::scale::fabric_scale(&cfg);
    let d = PyDict::new(py);
    d.set_item("base_rtt_ns", s.rtt_ps as f64 / 1000.0)?;
    d.set_item("hops", s.hops)?;
    d.set_item("bdp_bytes", s.bdp_bytes)?;
    d.set_item("bdp_packets", s.bdp_packets)?;
    Ok(d)
}

/// The offered load of each tier of links (`net::scale::tier_loads`) when flows `src[i]` -> `dst[i]` of
/// `size_bytes[i]` arrive over `span_ns`: a list of (tier, ports, mean load, most loaded port's load), and the
/// data packets' port crossings on those paths.
/// The flow columns a fabric function reads: of one length, and every host in the topology.
fn check_pairs(cfg: &Config, src: &[u32], dst: &[u32], size: &[u64]) -> PyResult<()> {
    if src.len() != dst.len() || src.len() != size.len() {
        return Err(PyValueError::new_err("src, dst and size_bytes must have the same length"));
    }
    let hosts = cfg.topology.hosts();
    if let Some(&h) = src.iter().chain(dst).find(|&&h| h >= hosts) {
        return Err(PyValueError::new_err(format!("host {h} is not in the topology ({hosts} hosts)")));
    }
    Ok(())
}

#[pyfunction]
fn tier_loads<'py>(
    config_json: &str,
    src: PyReadonlyArray1<'py, u32>,
    dst: PyReadonlyArray1<'py, u32>,
    size_bytes: PyReadonlyArray1<'py, u64>,
    span_ns: f64,
) -> PyResult<(Vec<(&'static str, u32, f64, f64)>, u64)> {
    let cfg = parse(config_json)?;
    let (src, dst, size) = (src.as_slice()?, dst.as_slice()?, size_bytes.as_slice()?);
    check_pairs(&cfg, src, dst, size)?;
    let span_ps = (span_ns.max(0.0) * 1000.0) as u64;
    let (loads, packet_hops) = fctlab_sim::net::scale::tier_loads(&cfg, src, dst, size, span_ps);
    Ok((loads.into_iter().map(|t| (t.tier, t.ports, t.mean, t.max)).collect(), packet_hops))
}

/// Each flow's ideal FCT in ns (float): alone in the idle fabric, sending at line rate from its first packet,
/// on the path its ECMP hash picks (`net::ideal::ideal_fcts`; the same function the results' `ideal_fct_ns` come
/// from, without a handshake). The floor of drawn deadlines (`workload.deadline_floor = "ideal"`).
#[pyfunction]
fn ideal_fct_ns<'py>(
    py: Python<'py>,
    config_json: &str,
    src: PyReadonlyArray1<'py, u32>,
    dst: PyReadonlyArray1<'py, u32>,
    size_bytes: PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
    let cfg = parse(config_json)?;
    let (src, dst, size) = (src.as_slice()?, dst.as_slice()?, size_bytes.as_slice()?);
    check_pairs(&cfg, src, dst, size)?;
    let out: Vec<f64> =
        fctlab_sim::net::ideal::ideal_fcts(&cfg, src, dst, size).into_iter().map(|ps| ps as f64 / 1000.0).collect();
    Ok(out.into_pyarray(py))
}

/// Would two engine threads speed a run of this config up (see `engine::two_threads_worthwhile`)?
#[pyfunction]
fn two_threads_worthwhile(config_json: &str) -> PyResult<bool> {
    Ok(fctlab_sim::engine::two_threads_worthwhile(&parse(config_json)?))
}

/// Counters the engine updates while it runs (flows finished so far, simulated time reached), for a progress
/// bar polled from another Python thread. Both levels update them.
#[pyclass(frozen)]
#[derive(Default)]
struct Progress {
    inner: Arc<fctlab_sim::Progress>,
}

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Progress::default()
    }

    /// Flows whose receiver holds every byte so far.
    #[getter]
    fn flows_done(&self) -> u64 {
        self.inner.flows_done.load(Ordering::Relaxed)
    }

    /// The simulated time reached so far (ps).
    #[getter]
    fn sim_time_ps(&self) -> u64 {
        self.inner.sim_time_ps.load(Ordering::Relaxed)
    }
}

/// The flow input columns the engine takes (`flows::FLOW_COLUMNS`) as a JSON list of rows: name, dtype
/// ("uint32", "uint64", "uint8" or "bool"), required, none (the entry meaning "none" for a flow, or null) and
/// meaning.
#[pyfunction]
fn flow_columns() -> String {
    serde_json::to_string(FLOW_COLUMNS).expect("flow columns serialize")
}

/// Copy one numpy array into a FlowSet column of entries `T`; a value that is not a 1-D array of `T` is refused
/// naming the column.
fn fill<T: numpy::Element + Copy>(into: &mut Vec<T>, value: &Bound<'_, PyAny>, column: &FlowColumn) -> PyResult<()> {
    match value.extract::<PyReadonlyArray1<'_, T>>() {
        Ok(a) => {
            *into = a.as_array().to_vec();
            Ok(())
        }
        Err(_) => {
            let got = match (value.getattr("ndim"), value.getattr("dtype")) {
                (Ok(ndim), Ok(dtype)) => format!("a {ndim}-D array of {dtype}"),
                _ => value.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string()),
            };
            Err(PyValueError::new_err(format!(
                "flows.{}: must be a 1-D numpy array of {} (got {got})",
                column.name,
                column.dtype.as_str()
            )))
        }
    }
}

/// The flows of a run from a mapping column name -> 1-D numpy array, as `FLOW_COLUMNS` describes them: an
/// unknown name, a missing required column or a wrong dtype is refused naming the column (lengths and values are
/// `FlowSet::validate`'s).
fn flow_set(columns: &Bound<'_, PyDict>) -> PyResult<FlowSet> {
    let mut flows = FlowSet::default();
    for (key, value) in columns.iter() {
        let name: String = key.extract().map_err(|_| {
            PyValueError::new_err(format!(
                "flows: column names must be strings (got {})",
                key.repr().map_or("?".into(), |r| r.to_string())
            ))
        })?;
        let Some(column) = FLOW_COLUMNS.iter().find(|c| c.name == name) else {
            let known: Vec<&str> = FLOW_COLUMNS.iter().map(|c| c.name).collect();
            return Err(PyValueError::new_err(format!(
                "flows.{name}: unknown column; the engine takes {}",
                known.join(", ")
            )));
        };
        match flows.column_mut(column.name).expect("every row names a FlowSet column") {
            ColumnMut::Uint32(v) => fill(v, &value, column)?,
            ColumnMut::Uint64(v) => fill(v, &value, column)?,
            ColumnMut::Uint8(v) => fill(v, &value, column)?,
            ColumnMut::Bool(v) => fill(v, &value, column)?,
        }
    }
    if let Some(c) = FLOW_COLUMNS.iter().find(|c| c.required && !columns.contains(c.name).unwrap_or(false)) {
        return Err(PyValueError::new_err(format!("flows.{}: a required column is missing", c.name)));
    }
    Ok(flows)
}

/// A flow fault: (message, flow id or None, column or None, the fault said of the cell alone or None).
type FlowFault = (String, Option<usize>, Option<&'static str>, Option<String>);

/// Check flows against a config as a run would before it simulates anything (`validate::flows`: the columns'
/// consistency, the largest flow the level and family count, the columns the scheme reads, what the level or
/// family cannot take). None when a run would accept them; else (message, flow, column, problem): the flow id
/// (0-based) and column at fault where one is, so that a front end can name a file's row and column.
#[pyfunction]
fn check_flows(config_json: &str, columns: &Bound<'_, PyDict>) -> PyResult<Option<FlowFault>> {
    let cfg = parse(config_json)?;
    let flows = flow_set(columns)?;
    Ok(fctlab_sim::validate::flows(&cfg, &flows).err().map(|e| match e.cell {
        Some(c) => (e.message, c.flow, Some(c.column), Some(c.problem)),
        None => (e.message, None, None, None),
    }))
}

/// Run one simulation on up to `threads` threads (any number >= 1: the results are the same; see
/// `engine::parallel`). `columns` maps each flow input
/// column's name (`flow_columns()`) to a 1-D numpy array of its dtype. Releases the GIL while simulating.
///
/// Returns (columns, summary_json): columns is a dict of numpy arrays in flow-id order.
///
/// `on_batch`: a callable `on_batch(first, columns)` that takes the result columns instead, in batches of
/// `batch_rows` flows in flow-id order (`first` the batch's first flow id; the last batch shorter, one empty
/// batch for no flows); the returned dict is then empty. The flow level calls it while it runs, as soon as a
/// batch's flows and every flow before them are done (`fctlab_sim::run_batches`), so it never holds the whole
/// columns; the packet level calls it when the run ends, from its whole columns. The call is made on the
/// thread that called `run`, with the GIL taken for it (the engine releases it in between); an exception it
/// raises ends the run and is raised from `run`.
#[pyfunction]
#[pyo3(signature = (config_json, columns, progress=None, threads=1, on_batch=None, batch_rows=65_536))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    config_json: &str,
    columns: &Bound<'py, PyDict>,
    progress: Option<&Progress>,
    threads: usize,
    on_batch: Option<PyObject>,
    batch_rows: usize,
) -> PyResult<(Bound<'py, PyDict>, String)> {
    let cfg = parse(config_json)?;
    if threads < 1 {
        return Err(PyValueError::new_err(format!("threads: must be >= 1 (got {threads})")));
    }
    if batch_rows < 1 {
        return Err(PyValueError::new_err(format!("batch_rows: must be >= 1 (got {batch_rows})")));
    }
    let flows = flow_set(columns)?;
    flows.validate(cfg.topology.hosts()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let counter = progress.map(|p| p.inner.clone());
    // (an exception from on_batch, kept to be raised as itself once the engine has stopped)
    let mut raised: Option<PyErr> = None;
    let outcome = py.allow_threads(|| {
        catch_unwind(AssertUnwindSafe(|| match &on_batch {
            None => fctlab_sim::run(&cfg, &flows, counter.as_deref(), threads),
            Some(callback) => {
                let mut each = |first: usize, batch: FlowResults| -> Result<(), FlowError> {
                    Python::with_gil(|py| {
                        let d = result_columns(py, batch)?;
                        callback.call1(py, (first, d)).map(drop)
                    })
                    .map_err(|e| {
                        raised = Some(e);
                        FlowError::new("on_batch raised")
                    })
                };
                let out = fctlab_sim::Batches { rows: batch_rows, each: &mut each };
                fctlab_sim::run_batches(&cfg, &flows, counter.as_deref(), threads, out)
            }
        }))
    });
    if let Some(e) = raised {
        return Err(e);
    }
    let out = match outcome {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(PyValueError::new_err(e.to_string())),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            return Err(PyRuntimeError::new_err(format!(
                "fctlab engine failed: {what}; config: {}",
                serde_json::to_string(&cfg).unwrap_or_default()
            )));
        }
    };
    let d = if on_batch.is_some() { PyDict::new(py) } else { result_columns(py, out.results)? };
    Ok((d, serde_json::to_string(&out.stats).unwrap()))
}

/// A run's (or a batch's) result columns as a dict of numpy arrays, under the names Python reads them by.
fn result_columns(py: Python<'_>, r: FlowResults) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("start_ps", r.start_ps.into_pyarray(py))?;
    d.set_item("finish_ps", r.finish_ps.into_pyarray(py))?;
    d.set_item("sender_done_ps", r.sender_done_ps.into_pyarray(py))?;
    d.set_item("ideal_fct_ps", r.ideal_fct_ps.into_pyarray(py))?;
    d.set_item("retransmits", r.retransmits.into_pyarray(py))?;
    d.set_item("timeouts", r.timeouts.into_pyarray(py))?;
    d.set_item("bytes_sent", r.bytes_sent.into_pyarray(py))?;
    d.set_item("bytes_delivered", r.bytes_delivered.into_pyarray(py))?;
    d.set_item("bytes_dropped", r.bytes_dropped.into_pyarray(py))?;
    d.set_item("ecn_marked", r.ecn_marked.into_pyarray(py))?;
    d.set_item("probes", r.probes.into_pyarray(py))?;
    d.set_item("fast_recoveries", r.fast_recoveries.into_pyarray(py))?;
    d.set_item("priority_losses", r.priority_losses.into_pyarray(py))?;
    // the engine's `duplicate_data`: copies of data the receiver already held, i.e. spurious retransmissions
    d.set_item("spurious_retransmits", r.duplicate_data.into_pyarray(py))?;
    d.set_item("ooo_max_segments", r.ooo_max_segments.into_pyarray(py))?;
    if !r.data_arrivals.is_empty() {
        // the TCP family's: data packets delivered and their time in queues, summed (ps)
        d.set_item("data_arrivals", r.data_arrivals.into_pyarray(py))?;
        d.set_item("queue_delay_ps", r.queue_delay_ps.into_pyarray(py))?;
    }
    d.set_item("terminated", r.terminated.into_pyarray(py))?;
    d.set_item("app_done_ps", r.app_done_ps.into_pyarray(py))?;
    d.set_item("copy_rate_bps", r.copy_rate_bps.into_pyarray(py))?;
    if !r.man_wait_ps.is_empty() {
        d.set_item("man_wait_ps", r.man_wait_ps.into_pyarray(py))?;
        d.set_item("man_stopped_ps", r.man_stopped_ps.into_pyarray(py))?;
        d.set_item("man_preemptions", r.man_preemptions.into_pyarray(py))?;
    }
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema, m)?)?;
    m.add_function(wrap_pyfunction!(two_threads_worthwhile, m)?)?;
    m.add_function(wrap_pyfunction!(default_topology, m)?)?;
    m.add_function(wrap_pyfunction!(validate_config, m)?)?;
    m.add_function(wrap_pyfunction!(topology_info, m)?)?;
    m.add_function(wrap_pyfunction!(topology_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_rows, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(flow_columns, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(check_flows, m)?)?;
    m.add_function(wrap_pyfunction!(ideal_fct_ns, m)?)?;
    m.add_function(wrap_pyfunction!(fabric_scale, m)?)?;
    m.add_function(wrap_pyfunction!(tier_loads, m)?)?;
    m.add_class::<Progress>()?;
    Ok(())
}
