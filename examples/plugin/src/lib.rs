//! An example parsim communication-model plugin (C ABI version 1, see
//! `parsim_model.h`): Hockney's model with a per-hop latency on a torus.
//!
//! A message of `n` bytes from node `s` to node `d` takes
//!
//! ```text
//! T(n) = a + hops(s, d)·h + n·b
//! ```
//!
//! - `a + n·b` is Hockney's model, `t(n) = t_0 + n / r_inf` (R. W. Hockney,
//!   "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
//!   Parallel Computing 20(3), 1994), with `a = t_0` (param `latency`) and
//!   `b = 1 / r_inf` (param `bandwidth` = r_inf in bytes per second).
//! - `hops·h` is the distance term of wormhole routing in a direct network,
//!   `t = t_s + D·t_h + n·t_w` (L. M. Ni, P. K. McKinley, "A survey of
//!   wormhole routing techniques in direct networks", IEEE Computer 26(2),
//!   1993), with `h = t_h` (param `per_hop`) and `D` the torus distance
//!   `hops(s, d) = Σ_i min(|s_i − d_i|, k_i − |s_i − d_i|)` over the
//!   dimensions `k_1 x k_2 x ...` (param `dims`, e.g. `"4x4"`), node
//!   coordinates taken in mixed radix with the first dimension fastest.
//!
//! Ranks are placed on nodes in blocks of `ranks_per_node`; a node number
//! beyond the torus wraps around (`node mod Π k_i`). Each node has one
//! injection link: a message starts at `start = max(ready, link_free[s])`,
//! arrives at `start + T(n)`, and keeps the link busy until `start + n·b`,
//! when also the sender's buffer is free. So per pair, arrivals never
//! decrease: the next message starts at `start' >= start + n·b`, and
//! `start' + a + hops·h + n'·b >= start + T(n)`.
//!
//! The send and receive overheads (`overhead`, the same for both) are
//! charged by parsim on the CPUs; compute is `nominal / cpu_rate`, a copy
//! `bytes / memcpy`.

use std::ffi::{CStr, c_char, c_int, c_void};

/// The ABI version this plugin implements (`PARSIM_MODEL_ABI_VERSION`).
#[cfg(not(feature = "wrong-abi"))]
const ABI_VERSION: u32 = 1;
/// A deliberately wrong version, for parsim's refusal test.
#[cfg(feature = "wrong-abi")]
const ABI_VERSION: u32 = 999;

/// `kind` of a rendezvous payload (`PARSIM_RENDEZVOUS_DATA`).
#[cfg(feature = "faulty")]
const KIND_DATA: u32 = 3;

/// The parameters, in seconds, bytes and bytes per second.
#[derive(Debug, Clone)]
struct Params {
    /// Torus dimensions, each at least 1.
    dims: Vec<u64>,
    /// Ranks per node, at least 1.
    ranks_per_node: u64,
    /// a: start-up time of a message.
    latency: f64,
    /// h: time per hop.
    per_hop: f64,
    /// b: seconds per byte, `1 / bandwidth`.
    per_byte: f64,
    /// o_s = o_r.
    overhead: f64,
    eager_limit: u64,
    control_bytes: u64,
    cpu_rate: f64,
    /// Seconds per copied byte.
    copy_per_byte: f64,
}

/// A model object: the parameters and the per-node injection links.
#[derive(Debug)]
struct Model {
    params: Params,
    /// Ranks of the current run.
    ranks: u32,
    /// Per node: when its injection link can start the next message.
    link_free: Vec<f64>,
}

impl Params {
    fn from_pairs(pairs: &[(String, String)]) -> Result<Self, String> {
        let mut params = Params {
            dims: Vec::new(),
            ranks_per_node: 1,
            latency: 5e-6,
            per_hop: 0.0,
            per_byte: 1e-8,
            overhead: 0.0,
            eager_limit: 65_536,
            control_bytes: 64,
            cpu_rate: 1.0,
            copy_per_byte: 1e-9,
        };
        for (key, value) in pairs {
            match key.as_str() {
                "dims" => params.dims = parse_dims(value)?,
                "ranks_per_node" => {
                    params.ranks_per_node = parse_count(key, value)?;
                    if params.ranks_per_node == 0 {
                        return Err(format!("{key}: must be at least 1, got {value}"));
                    }
                }
                "latency" => params.latency = parse_seconds(key, value)?,
                "per_hop" => params.per_hop = parse_seconds(key, value)?,
                "overhead" => params.overhead = parse_seconds(key, value)?,
                "bandwidth" => params.per_byte = 1.0 / parse_rate(key, value)?,
                "memcpy" => params.copy_per_byte = 1.0 / parse_rate(key, value)?,
                "cpu_rate" => params.cpu_rate = parse_rate(key, value)?,
                "eager_limit" => params.eager_limit = parse_count(key, value)?,
                "control_bytes" => params.control_bytes = parse_count(key, value)?,
                _ => {
                    return Err(format!(
                        "unknown parameter `{key}` (known: dims, ranks_per_node, latency, \
                         per_hop, bandwidth, overhead, eager_limit, control_bytes, cpu_rate, \
                         memcpy)"
                    ));
                }
            }
        }
        if params.dims.is_empty() {
            return Err("missing parameter `dims`, the torus dimensions such as \"4x4\"".into());
        }
        Ok(params)
    }

    /// `Π k_i`, at least 1 and at most 2^32 (checked by `parse_dims`).
    fn nodes(&self) -> u64 {
        self.dims.iter().product()
    }

    fn node_of(&self, rank: u32) -> u64 {
        u64::from(rank) / self.ranks_per_node
    }

    /// The torus distance between the nodes of two ranks.
    fn hops(&self, src: u32, dst: u32) -> u64 {
        let nodes = self.nodes();
        let (mut s, mut d) = (self.node_of(src) % nodes, self.node_of(dst) % nodes);
        let mut hops = 0;
        for &k in &self.dims {
            let (si, di) = (s % k, d % k);
            let delta = si.abs_diff(di);
            hops += delta.min(k - delta);
            s /= k;
            d /= k;
        }
        hops
    }

    /// Hockney's time with the distance term: `a + hops·h + n·b`.
    fn message_time(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        self.latency + self.hops(src, dst) as f64 * self.per_hop + bytes as f64 * self.per_byte
    }
}

/// `"4x4"`, `"8x8x8"`, `"16"`: positive dimensions whose product is at most
/// 2^32 (node numbers are below 2^32 anyway).
fn parse_dims(text: &str) -> Result<Vec<u64>, String> {
    let bad = || format!("dims: expected dimensions such as \"4x4\", got \"{text}\"");
    let dims: Vec<u64> = text
        .split(['x', 'X'])
        .map(|part| part.trim().parse::<u64>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let nodes = dims
        .iter()
        .try_fold(1u64, |product, &k| product.checked_mul(k))
        .filter(|&nodes| nodes <= 1 << 32);
    if dims.contains(&0) || nodes.is_none() {
        return Err(bad());
    }
    Ok(dims)
}

fn parse_number(key: &str, text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("{key}: expected a number, got \"{text}\""))
}

/// A non-negative time in seconds.
fn parse_seconds(key: &str, text: &str) -> Result<f64, String> {
    let x = parse_number(key, text)?;
    if x < 0.0 {
        return Err(format!("{key}: must not be negative, got {text}"));
    }
    Ok(x)
}

/// A positive rate.
fn parse_rate(key: &str, text: &str) -> Result<f64, String> {
    let x = parse_number(key, text)?;
    if x <= 0.0 {
        return Err(format!("{key}: must be positive, got {text}"));
    }
    Ok(x)
}

/// A whole, non-negative number.
fn parse_count(key: &str, text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| format!("{key}: expected a whole number, got \"{text}\""))
}

impl Model {
    fn transfer(&mut self, src: u32, dst: u32, bytes: u64, ready: f64) -> Option<(f64, f64)> {
        if src >= self.ranks || dst >= self.ranks {
            return None;
        }
        let node = usize::try_from(self.params.node_of(src)).ok()?;
        let link = self.link_free.get_mut(node)?;
        let start = ready.max(*link);
        let wire = bytes as f64 * self.params.per_byte;
        *link = start + wire;
        let arrival = start + self.params.message_time(src, dst, bytes);
        Some((start + wire, arrival))
    }
}

/// Writes `message` as a NUL-terminated string of at most `len` bytes.
///
/// # Safety
/// `err` is null or valid for writes of `len` bytes.
unsafe fn write_error(err: *mut c_char, len: usize, message: &str) {
    if err.is_null() || len == 0 {
        return;
    }
    let n = message.len().min(len - 1);
    // SAFETY: `n + 1 <= len` bytes, and `err` is valid for `len` (caller).
    unsafe {
        std::ptr::copy_nonoverlapping(message.as_ptr().cast::<c_char>(), err, n);
        *err.add(n) = 0;
    }
}

/// See `parsim_model.h`.
#[unsafe(no_mangle)]
pub extern "C" fn parsim_model_abi_version() -> u32 {
    ABI_VERSION
}

/// See `parsim_model.h`.
///
/// # Safety
/// `keys` and `values` point to `n` NUL-terminated strings each (or `n` is
/// 0); `err` is null or valid for writes of `err_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_create(
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    err: *mut c_char,
    err_len: usize,
) -> *mut c_void {
    let mut pairs = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: `keys` and `values` have `n` elements (caller).
        let (key, value) = unsafe { (*keys.add(i), *values.add(i)) };
        if key.is_null() || value.is_null() {
            // SAFETY: `err` as the caller promised.
            unsafe { write_error(err, err_len, "a parameter key or value is NULL") };
            return std::ptr::null_mut();
        }
        // SAFETY: non-null, NUL-terminated (caller).
        let (key, value) = unsafe { (CStr::from_ptr(key), CStr::from_ptr(value)) };
        pairs.push((
            key.to_string_lossy().into_owned(),
            value.to_string_lossy().into_owned(),
        ));
    }
    match Params::from_pairs(&pairs) {
        Ok(params) => Box::into_raw(Box::new(Model {
            params,
            ranks: 0,
            link_free: Vec::new(),
        }))
        .cast(),
        Err(message) => {
            // SAFETY: `err` as the caller promised.
            unsafe { write_error(err, err_len, &message) };
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// `model` is null or from `parsim_model_create`, not yet destroyed.
unsafe fn model_ref<'a>(model: *const c_void) -> Option<&'a Model> {
    // SAFETY: a live `Box<Model>` pointer or null (caller).
    unsafe { model.cast::<Model>().as_ref() }
}

/// See `parsim_model.h`.
///
/// # Safety
/// `model` is null or from `parsim_model_create`, destroyed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_destroy(model: *mut c_void) {
    if !model.is_null() {
        // SAFETY: from `Box::into_raw` in `parsim_model_create` (caller).
        drop(unsafe { Box::from_raw(model.cast::<Model>()) });
    }
}

/// See `parsim_model.h`.
///
/// # Safety
/// `model` is null or a live model, used by no other thread meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_reset(model: *mut c_void, ranks: u32) {
    // SAFETY: a live `Box<Model>` pointer or null, not aliased (caller).
    let Some(model) = (unsafe { model.cast::<Model>().as_mut() }) else {
        return;
    };
    model.ranks = ranks;
    let nodes = u64::from(ranks).div_ceil(model.params.ranks_per_node);
    model.link_free.clear();
    model
        .link_free
        .resize(usize::try_from(nodes).unwrap_or(0), f64::NEG_INFINITY);
}

/// See `parsim_model.h`.
///
/// # Safety
/// `model` is null or a live model.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_compute_seconds(
    model: *const c_void,
    _rank: u32,
    nominal: f64,
) -> f64 {
    // SAFETY: as the caller promised.
    let Some(model) = (unsafe { model_ref(model) }) else {
        return nominal;
    };
    #[cfg(feature = "faulty")]
    if nominal == 13.0 {
        return f64::NAN;
    }
    nominal / model.params.cpu_rate
}

/// See `parsim_model.h`.
///
/// # Safety
/// `model` is null or a live model.
#[cfg(not(feature = "missing-symbol"))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_copy_seconds(
    model: *const c_void,
    _rank: u32,
    bytes: u64,
) -> f64 {
    // SAFETY: as the caller promised.
    let Some(model) = (unsafe { model_ref(model) }) else {
        return 0.0;
    };
    bytes as f64 * model.params.copy_per_byte
}

/// See `parsim_model.h`.
///
/// # Safety
/// `model` is null or a live model.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_eager_limit(
    model: *const c_void,
    _src: u32,
    _dst: u32,
) -> u64 {
    // SAFETY: as the caller promised.
    unsafe { model_ref(model) }.map_or(0, |model| model.params.eager_limit)
}

/// See `parsim_model.h`.
///
/// # Safety
/// `model` is null or a live model.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_control_bytes(
    model: *const c_void,
    _src: u32,
    _dst: u32,
) -> u64 {
    // SAFETY: as the caller promised.
    unsafe { model_ref(model) }.map_or(0, |model| model.params.control_bytes)
}

/// See `parsim_model.h`.
///
/// # Safety
/// `model` is null or a live model.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_send_overhead(
    model: *const c_void,
    _src: u32,
    _dst: u32,
    _bytes: u64,
) -> f64 {
    // SAFETY: as the caller promised.
    unsafe { model_ref(model) }.map_or(0.0, |model| model.params.overhead)
}

/// See `parsim_model.h`.
///
/// # Safety
/// `model` is null or a live model.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_recv_overhead(
    model: *const c_void,
    _src: u32,
    _dst: u32,
    bytes: u64,
) -> f64 {
    #[cfg(feature = "faulty")]
    if bytes == 13 {
        return -1.0;
    }
    let _ = bytes;
    // SAFETY: as the caller promised.
    unsafe { model_ref(model) }.map_or(0.0, |model| model.params.overhead)
}

/// See `parsim_model.h`. Returns 1 for a rank outside the run (or a null
/// model), 0 otherwise.
///
/// # Safety
/// `model` is null or a live model, used by no other thread meanwhile;
/// `cpu_free` and `arrival` are valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parsim_model_transfer(
    model: *mut c_void,
    src: u32,
    dst: u32,
    bytes: u64,
    kind: u32,
    ready: f64,
    cpu_free: *mut f64,
    arrival: *mut f64,
) -> c_int {
    // SAFETY: a live `Box<Model>` pointer or null, not aliased (caller).
    let Some(model) = (unsafe { model.cast::<Model>().as_mut() }) else {
        return 1;
    };
    if cpu_free.is_null() || arrival.is_null() {
        return 1;
    }
    let _ = kind; // every kind is charged alike in this model
    let Some((free, at)) = model.transfer(src, dst, bytes, ready) else {
        return 1;
    };
    #[cfg(feature = "faulty")]
    let (free, at) = match (bytes, kind) {
        (13, _) => (free, f64::NAN),
        (14, _) => (free, ready - 1e-3),
        (15, _) => (-1.0, at),
        (16, KIND_DATA) => (free, ready),
        (17, _) => return 7,
        _ => (free, at),
    };
    // SAFETY: valid for writes (caller).
    unsafe {
        *cpu_free = free;
        *arrival = at;
    }
    0
}
