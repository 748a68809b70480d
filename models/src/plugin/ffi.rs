//! The crate's only `unsafe` code: loading a model plugin (a shared library
//! with the C ABI of `examples/plugin/parsim_model.h`) and calling it.
//!
//! # Safety argument
//!
//! What Rust cannot check here, and why it holds or whose promise it is:
//!
//! 1. **Loading runs foreign code.** `dlopen`/`LoadLibrary` runs the
//!    library's initialisers with our privileges. parsim loads only the
//!    library a machine file names (`[plugin] library`), at the user's
//!    request, which is as much trust as running a program they built; we
//!    cannot check what its code does. Loading has no other precondition.
//! 2. **Symbol types.** A symbol is only a name; its type is our claim. The
//!    first and only call made before checking anything is
//!    `parsim_model_abi_version`, whose signature `uint32_t (void)` the ABI
//!    fixes for all versions. Only when it returns [`ABI_VERSION`] do we
//!    look up and call the other functions with the signatures of that
//!    version of `parsim_model.h`: the library promised them by reporting
//!    the version. A library that reports a version it does not implement
//!    is undefined behaviour we cannot detect.
//! 3. **Lifetimes.** The function pointers are copied out of the
//!    [`libloading::Symbol`]s and used only while [`Plugin`] owns the
//!    [`Library`], which it drops last (fields drop after [`Drop::drop`]
//!    has destroyed the model, in declaration order, and `_library` is
//!    declared last). The model pointer comes from `parsim_model_create`,
//!    is non-null, is passed only to this library's functions, and is
//!    destroyed exactly once, in [`Drop::drop`].
//! 4. **Arguments.** Keys and values are [`CString`]s that outlive the
//!    `create` call, with arrays of exactly `n` pointers; the error buffer
//!    is ours, `ERROR_LEN` bytes, zeroed, and read back only within its
//!    length; the out-pointers of `transfer` point to our locals. `&self`
//!    methods call only functions the ABI declares `const void *model`
//!    (which must not change the model); `&mut self` methods the others,
//!    so calls on one model never overlap.
//! 5. **Threads.** [`Plugin`] is `Send`: the ABI requires a model object to
//!    work from any one thread at a time (no thread-local state), and
//!    `&mut`/`&` borrows keep it to one thread at a time. It is not `Sync`;
//!    `PluginMachine` shares it between threads only inside a `Mutex`,
//!    whose guard a run holds.
//! 6. **Unwinding.** A Rust plugin's `extern "C"` functions abort instead of
//!    unwinding; the ABI forbids C++ exceptions and panics crossing it.
//!
//! Results are plain numbers; whether they make sense is checked by the
//! safe caller (`PluginMachine`).

use std::ffi::{CString, c_char, c_int, c_void};
use std::fmt;
use std::path::Path;
use std::ptr::NonNull;

use libloading::Library;

/// The version of the C ABI this parsim implements
/// (`PARSIM_MODEL_ABI_VERSION` of `parsim_model.h`).
pub const ABI_VERSION: u32 = 1;

/// Bytes of the buffer for `parsim_model_create`'s error message.
const ERROR_LEN: usize = 1024;

type AbiVersionFn = unsafe extern "C" fn() -> u32;
type CreateFn = unsafe extern "C" fn(
    *const *const c_char,
    *const *const c_char,
    usize,
    *mut c_char,
    usize,
) -> *mut c_void;
type DestroyFn = unsafe extern "C" fn(*mut c_void);
type ResetFn = unsafe extern "C" fn(*mut c_void, u32);
type ComputeFn = unsafe extern "C" fn(*const c_void, u32, f64) -> f64;
type CopyFn = unsafe extern "C" fn(*const c_void, u32, u64) -> f64;
type PairFn = unsafe extern "C" fn(*const c_void, u32, u32) -> u64;
type OverheadFn = unsafe extern "C" fn(*const c_void, u32, u32, u64) -> f64;
type TransferFn =
    unsafe extern "C" fn(*mut c_void, u32, u32, u64, u32, f64, *mut f64, *mut f64) -> c_int;

/// Why a plugin could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The system refused to load the library.
    Load(String),
    /// The library reports another ABI version.
    Abi(u32),
    /// The library lacks a function.
    Symbol(&'static str),
    /// `parsim_model_create` returned null, with the plugin's message.
    Create(String),
}

/// The functions of ABI version 1, other than the two used only while
/// opening.
#[derive(Debug, Clone, Copy)]
struct Api {
    destroy: DestroyFn,
    reset: ResetFn,
    compute_seconds: ComputeFn,
    copy_seconds: CopyFn,
    eager_limit: PairFn,
    control_bytes: PairFn,
    send_overhead: OverheadFn,
    recv_overhead: OverheadFn,
    transfer: TransferFn,
}

/// A loaded plugin and one model object it created.
pub struct Plugin {
    model: NonNull<c_void>,
    api: Api,
    /// Declared last so that it is dropped last (safety argument, 3).
    _library: Library,
}

impl fmt::Debug for Plugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plugin")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

#[expect(
    unsafe_code,
    reason = "the model pointer may move between threads (safety argument, 5)"
)]
// SAFETY: safety argument, 5.
unsafe impl Send for Plugin {}

/// Loads the library. On Unix with `RTLD_NOW`, so that a library with
/// unresolved dependencies fails here, with the loader's message, rather
/// than at its first call.
#[expect(unsafe_code, reason = "loading a library runs its initialisers")]
fn load(path: &Path) -> Result<Library, libloading::Error> {
    #[cfg(unix)]
    {
        use libloading::os::unix;
        // SAFETY: safety argument, 1.
        unsafe { unix::Library::open(Some(path), unix::RTLD_NOW | unix::RTLD_LOCAL) }
            .map(Library::from)
    }
    #[cfg(not(unix))]
    {
        // SAFETY: safety argument, 1.
        unsafe { Library::new(path) }
    }
}

/// Looks up `name` (without the trailing NUL) as a `T`.
///
/// Callers name the type the ABI gives the symbol (safety argument, 2).
#[expect(unsafe_code, reason = "a symbol's type is our claim")]
fn symbol<T: Copy>(library: &Library, name: &'static str) -> Result<T, OpenError> {
    let mut bytes = Vec::with_capacity(name.len() + 1);
    bytes.extend_from_slice(name.as_bytes());
    bytes.push(0);
    // SAFETY: `T` is the symbol's type in the ABI version checked before
    // (safety argument, 2); the copy does not outlive the library (3).
    unsafe { library.get::<T>(&bytes) }
        .map(|symbol| *symbol)
        .map_err(|_| OpenError::Symbol(name))
}

impl Plugin {
    /// Loads `path`, checks its ABI version, looks up every function and
    /// creates a model from `params`.
    #[expect(unsafe_code, reason = "calls into the plugin")]
    pub fn open(path: &Path, params: &[(String, String)]) -> Result<Self, OpenError> {
        let library = load(path).map_err(|err| OpenError::Load(err.to_string()))?;
        let abi_version: AbiVersionFn = symbol(&library, "parsim_model_abi_version")?;
        // SAFETY: the signature every ABI version shares (safety argument, 2).
        let version = unsafe { abi_version() };
        if version != ABI_VERSION {
            return Err(OpenError::Abi(version));
        }
        let create: CreateFn = symbol(&library, "parsim_model_create")?;
        let api = Api {
            destroy: symbol(&library, "parsim_model_destroy")?,
            reset: symbol(&library, "parsim_model_reset")?,
            compute_seconds: symbol(&library, "parsim_model_compute_seconds")?,
            copy_seconds: symbol(&library, "parsim_model_copy_seconds")?,
            eager_limit: symbol(&library, "parsim_model_eager_limit")?,
            control_bytes: symbol(&library, "parsim_model_control_bytes")?,
            send_overhead: symbol(&library, "parsim_model_send_overhead")?,
            recv_overhead: symbol(&library, "parsim_model_recv_overhead")?,
            transfer: symbol(&library, "parsim_model_transfer")?,
        };

        let to_c = |text: &str| {
            CString::new(text).map_err(|_| {
                OpenError::Create(format!("parameter text {text:?} contains a NUL byte"))
            })
        };
        let keys = params
            .iter()
            .map(|(key, _)| to_c(key))
            .collect::<Result<Vec<_>, _>>()?;
        let values = params
            .iter()
            .map(|(_, value)| to_c(value))
            .collect::<Result<Vec<_>, _>>()?;
        let key_ptrs: Vec<*const c_char> = keys.iter().map(|key| key.as_ptr()).collect();
        let value_ptrs: Vec<*const c_char> = values.iter().map(|value| value.as_ptr()).collect();
        let mut error: Vec<c_char> = vec![0; ERROR_LEN];
        // SAFETY: safety argument, 4: `n` pointers to live NUL-terminated
        // strings each, and an `ERROR_LEN`-byte buffer.
        let model = unsafe {
            create(
                key_ptrs.as_ptr(),
                value_ptrs.as_ptr(),
                key_ptrs.len(),
                error.as_mut_ptr(),
                ERROR_LEN,
            )
        };
        match NonNull::new(model) {
            Some(model) => Ok(Plugin {
                model,
                api,
                _library: library,
            }),
            None => Err(OpenError::Create(read_message(&error))),
        }
    }

    #[expect(unsafe_code, reason = "calls into the plugin")]
    pub fn reset(&mut self, ranks: u32) {
        // SAFETY: a live model, `&mut self` (safety argument, 3 and 4).
        unsafe { (self.api.reset)(self.model.as_ptr(), ranks) }
    }

    #[expect(unsafe_code, reason = "calls into the plugin")]
    pub fn compute_seconds(&self, rank: u32, nominal: f64) -> f64 {
        // SAFETY: a live model, a `const` function (safety argument, 3 and 4).
        unsafe { (self.api.compute_seconds)(self.model.as_ptr(), rank, nominal) }
    }

    #[expect(unsafe_code, reason = "calls into the plugin")]
    pub fn copy_seconds(&self, rank: u32, bytes: u64) -> f64 {
        // SAFETY: a live model, a `const` function (safety argument, 3 and 4).
        unsafe { (self.api.copy_seconds)(self.model.as_ptr(), rank, bytes) }
    }

    #[expect(unsafe_code, reason = "calls into the plugin")]
    pub fn eager_limit(&self, src: u32, dst: u32) -> u64 {
        // SAFETY: a live model, a `const` function (safety argument, 3 and 4).
        unsafe { (self.api.eager_limit)(self.model.as_ptr(), src, dst) }
    }

    #[expect(unsafe_code, reason = "calls into the plugin")]
    pub fn control_bytes(&self, src: u32, dst: u32) -> u64 {
        // SAFETY: a live model, a `const` function (safety argument, 3 and 4).
        unsafe { (self.api.control_bytes)(self.model.as_ptr(), src, dst) }
    }

    #[expect(unsafe_code, reason = "calls into the plugin")]
    pub fn send_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        // SAFETY: a live model, a `const` function (safety argument, 3 and 4).
        unsafe { (self.api.send_overhead)(self.model.as_ptr(), src, dst, bytes) }
    }

    #[expect(unsafe_code, reason = "calls into the plugin")]
    pub fn recv_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        // SAFETY: a live model, a `const` function (safety argument, 3 and 4).
        unsafe { (self.api.recv_overhead)(self.model.as_ptr(), src, dst, bytes) }
    }

    /// `(return code, cpu_free, arrival)`; both times are NaN when the
    /// plugin did not write them.
    #[expect(unsafe_code, reason = "calls into the plugin")]
    pub fn transfer(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: u32,
        ready: f64,
    ) -> (c_int, f64, f64) {
        let (mut cpu_free, mut arrival) = (f64::NAN, f64::NAN);
        // SAFETY: a live model, `&mut self`, pointers to our locals
        // (safety argument, 3 and 4).
        let code = unsafe {
            (self.api.transfer)(
                self.model.as_ptr(),
                src,
                dst,
                bytes,
                kind,
                ready,
                &mut cpu_free,
                &mut arrival,
            )
        };
        (code, cpu_free, arrival)
    }
}

impl Drop for Plugin {
    #[expect(unsafe_code, reason = "calls into the plugin")]
    fn drop(&mut self) {
        // SAFETY: the model is live and destroyed only here; the library is
        // still loaded (safety argument, 3).
        unsafe { (self.api.destroy)(self.model.as_ptr()) }
    }
}

/// The plugin's NUL-terminated message, read within the buffer.
fn read_message(buffer: &[c_char]) -> String {
    // `c_char` is `i8` or `u8` by platform; the byte keeps the bits.
    let bytes: Vec<u8> = buffer
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| u8::from_ne_bytes(c.to_ne_bytes()))
        .collect();
    let message = String::from_utf8_lossy(&bytes).trim().to_owned();
    if message.is_empty() {
        "parsim_model_create returned no model and no message".into()
    } else {
        message
    }
}
