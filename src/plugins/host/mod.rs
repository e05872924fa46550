//! The host plugin ("generic ELF 64-bit", abi-reference §10.2): four devices
//! that run x86-64 shared-object images on the calling thread. Device memory
//! is separate `malloc` memory, so mapping semantics are observable exactly
//! as with LLVM's host plugin.
//!
//! Images are loaded from an anonymous `memfd` (no files are left in /tmp,
//! unlike LLVM 22.1); each device loads its own copy so each device has its
//! own copy of every global.

mod bind;
mod call;
mod cpu;
mod pool;
mod queue;

use super::{AllocKind, EventHandle, ImageHandle, KernelHandle, LaunchDims, Plugin, QueueHandle};
use crate::base::error::{OffloadError, Result};
use crate::base::image::{elf_ident, elf_symbol_size, machine};
use parking_lot::Mutex;
use std::ffi::CString;

/// Number of devices LLVM's host plugin exposes.
pub const NUM_DEVICES: usize = 4;

struct LoadedImage {
    /// The `dlopen` handle (`dlclose` when dropped).
    handle: Option<libloading::os::unix::Library>,
    /// Kept for symbol-size checks of globals.
    bytes: Vec<u8>,
    /// The memfd the image was loaded from (kept open, see `load_binary`).
    fd: libc::c_int,
}

/// Held around every `dlopen` and `dlclose` of an image. glibc's loader
/// holds its `dl_load_write_lock` inside both, and `fork` does not reset that
/// lock in the child: a child forked while another thread was loading or
/// unloading an image would hang in its own first `dlopen` (or
/// `dl_iterate_phdr`). The fork handlers take this lock (runtime/fork.rs),
/// so no fork happens in the middle of ours.
static LOADER: Mutex<()> = Mutex::new(());

impl Drop for LoadedImage {
    fn drop(&mut self) {
        // dlclose first: the descriptor names the object while it is loaded.
        let unloading = LOADER.lock();
        drop(self.handle.take());
        drop(unloading);
        // SAFETY: the memfd is this image's own and closed only here.
        unsafe { libc::close(self.fd) };
    }
}

/// The host plugin.
#[derive(Default)]
pub struct HostPlugin {
    /// Loaded images by handle; `None` once unloaded (the slot is reused).
    /// Kernels of an image run until the runtime unloads it, which it does
    /// only when no construct can reach the image any more.
    images: Mutex<Vec<Option<std::sync::Arc<LoadedImage>>>>,
    /// Deferred queues of the `OMPTARGET_RS_HOST_QUEUES` test mode.
    queues: queue::Queues,
    /// Freed device blocks kept for reuse (22.1's memory manager).
    pool: pool::Pool,
    /// Where the pool gets fresh memory.
    backing: Malloc,
}

/// Where the pool gets fresh memory: `malloc`, as LLVM's host plugin does,
/// so a fresh device buffer costs what a fresh host buffer does. Large ones
/// are advised as huge pages only when `OMPTARGET_RS_HOST_HUGE_PAGES` asks
/// (see [`alloc_huge`]).
struct Malloc {
    huge_pages: bool,
}

impl Default for Malloc {
    /// Reads `OMPTARGET_RS_HOST_HUGE_PAGES` (once, when the plugin is made).
    fn default() -> Self {
        let env = std::env::var("OMPTARGET_RS_HOST_HUGE_PAGES").ok();
        Malloc { huge_pages: crate::base::config::parse_bool(env.as_deref(), false) }
    }
}

impl pool::Backing for Malloc {
    fn alloc(&self, bytes: usize) -> Option<u64> {
        if self.huge_pages && bytes >= 2 * HUGE_PAGE {
            return alloc_huge(bytes);
        }
        // SAFETY: malloc accepts any size; NULL is handled below.
        let p = unsafe { libc::malloc(bytes.max(1)) };
        (!p.is_null()).then_some(p as u64)
    }

    fn free(&self, ptr: u64) {
        // SAFETY: the pool frees only pointers `alloc` returned, once.
        unsafe { libc::free(ptr as usize as *mut libc::c_void) };
    }
}

/// Transparent huge page size on x86-64.
const HUGE_PAGE: usize = 2 << 20;

/// Base page size on x86-64.
const PAGE: usize = 4096;

/// The whole pages inside `[start, start + bytes)`, if any: (first, length).
fn inner_pages(start: usize, bytes: usize) -> Option<(usize, usize)> {
    let first = start.next_multiple_of(PAGE);
    let end = start.checked_add(bytes)? & !(PAGE - 1);
    (end > first).then(|| (first, end - first))
}

/// A large device buffer advised as huge pages (`OMPTARGET_RS_HOST_HUGE_PAGES`
/// on): with THP in `madvise` mode, kernels reading it at random take far
/// fewer TLB misses. Off by default: a fresh huge page costs more than the
/// small pages it replaces wherever free huge pages are scarce or must first
/// be backed by a hypervisor, and a program that streams through its buffers
/// gains nothing back (docs/performance-memory.md has the measurements). The
/// buffer stays `malloc` memory (freed with `free`, same placement within its
/// page as other large `malloc` blocks, so copies between it and host buffers
/// keep glibc's fast path instead of hitting 4 KiB aliasing); the kernel backs
/// the 2 MiB-aligned stretches inside it with huge pages.
fn alloc_huge(bytes: usize) -> Option<u64> {
    // SAFETY: malloc accepts any size; NULL is handled below.
    let p = unsafe { libc::malloc(bytes) };
    if p.is_null() {
        return None;
    }
    if let Some((first, len)) = inner_pages(p as usize, bytes) {
        // Advice only: failure (THP disabled) leaves ordinary pages.
        // SAFETY: whole pages inside the allocation just made; madvise keeps their contents.
        unsafe { libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
    }
    Some(p as u64)
}

/// `memmove(dst, src, n)`, with copies of at most 16 bytes (a mapped
/// scalar, the most common copy of all) done inline instead of through a
/// call into libc.
///
/// # Safety
/// As [`std::ptr::copy`]: `[src, src+n)` readable, `[dst, dst+n)` writable.
#[inline(always)]
unsafe fn move_bytes(dst: *mut u8, src: *const u8, n: usize) {
    use std::ptr::{read_unaligned as rd, write_unaligned as wr};
    // SAFETY: every access below lies in `[src, src+n)` or `[dst, dst+n)` (the caller's contract); each pair of loads comes before its stores, so overlapping ranges copy as with memmove.
    unsafe {
        if n > 16 {
            std::ptr::copy(src, dst, n);
        } else if n >= 8 {
            let (a, b) = (rd(src.cast::<u64>()), rd(src.add(n - 8).cast::<u64>()));
            wr(dst.cast::<u64>(), a);
            wr(dst.add(n - 8).cast::<u64>(), b);
        } else if n >= 4 {
            let (a, b) = (rd(src.cast::<u32>()), rd(src.add(n - 4).cast::<u32>()));
            wr(dst.cast::<u32>(), a);
            wr(dst.add(n - 4).cast::<u32>(), b);
        } else if n > 0 {
            let (a, m, b) = (*src, *src.add(n / 2), *src.add(n - 1));
            *dst = a;
            *dst.add(n / 2) = m;
            *dst.add(n - 1) = b;
        }
    }
}

/// Copies of at least this many bytes may be the first fill of a large
/// device block (the pool's large blocks start at 4 MiB).
const FIRST_FILL_FROM: u64 = 4 << 20;

/// Most arguments a host kernel is called with. Arguments past the sixth go
/// on the calling thread's stack (8 bytes each), and the calling thread may
/// be a libomp worker or hidden-helper thread with a small stack: 4,096
/// arguments (32 KiB) fit any of them, and no compiled target region comes
/// near it (a C function has no fixed parameter limit the image could tell).
pub const MAX_KERNEL_ARGS: usize = 4096;

/// Refuses a launch with more arguments than [`MAX_KERNEL_ARGS`]
/// (2^21 arguments overflowed the stack in the call trampoline).
fn check_arg_count(name: &str, args: &[u64]) -> Result<()> {
    if args.len() > MAX_KERNEL_ARGS {
        return Err(OffloadError::InvalidArgument(format!(
            "kernel {name} launched with {} arguments, {} more than the host plugin's limit of {MAX_KERNEL_ARGS}",
            args.len(),
            args.len() - MAX_KERNEL_ARGS
        )));
    }
    Ok(())
}

/// The load base (`l_addr`) of a loaded object, with the object back.
fn load_base(lib: libloading::os::unix::Library) -> (libloading::os::unix::Library, Result<usize>) {
    let raw = lib.into_raw();
    let mut map: *mut libc::c_void = std::ptr::null_mut();
    // SAFETY: `raw` is a live dlopen handle; dlinfo RTLD_DI_LINKMAP writes one pointer to `map`.
    let ok = unsafe { libc::dlinfo(raw, libc::RTLD_DI_LINKMAP, (&raw mut map).cast()) } == 0;
    // SAFETY: `raw` came from `into_raw` just above and is owned again here.
    let lib = unsafe { libloading::os::unix::Library::from_raw(raw) };
    if !ok || map.is_null() {
        return (lib, Err(load_error("dlinfo(RTLD_DI_LINKMAP) failed".into())));
    }
    // SAFETY: a glibc `struct link_map` starts with `l_addr`, the load base.
    let base = unsafe { *(map as *const usize) };
    (lib, Ok(base))
}

fn load_error(what: String) -> OffloadError {
    OffloadError::BadImage(format!("failed to load target image: {what}"))
}

/// Why `dlopen` refused the image at `path`: the loader's own text
/// (`dlerror`), which names a missing dependency or an undefined symbol,
/// with the memfd path it starts with replaced by "the image".
fn dlopen_error(e: &libloading::Error, path: &str) -> OffloadError {
    let message = match std::error::Error::source(e) {
        Some(source) => {
            let text = source.to_string();
            match text.strip_prefix(path) {
                Some(rest) => format!("the image{rest}"),
                None => text,
            }
        }
        None => e.to_string(),
    };
    OffloadError::Driver { plugin: "x86_64", call: "dlopen", message }
}

/// The checks before `dlopen`: the file layout, then what the system loader
/// reads from a shared object, so that a corrupt image is refused with a
/// reason instead of crashing the loader or ending the process.
fn check_image(image: &[u8]) -> Result<()> {
    crate::base::elf::check_shared_object(image).map_err(|e| match e {
        OffloadError::BadImage(what) => load_error(what),
        other => other,
    })
}

impl HostPlugin {
    /// A copy of `size` (≥ [`FIRST_FILL_FROM`]) bytes from `src` to device
    /// address `dst`. When it is the first fill of a fresh large block, the
    /// pages it is about to write are faulted in first with one
    /// `madvise(MADV_POPULATE_WRITE)` instead of one page fault each (about
    /// a quarter less time for the copy). Only those pages: nothing the
    /// program does not write is touched.
    ///
    /// # Safety
    /// `[src, src+size)` is readable and `[dst, dst+size)` lies in a device
    /// allocation of this plugin.
    #[inline(never)]
    unsafe fn copy_large(&self, dst: u64, src: usize, size: u64) -> Result<()> {
        if let Ok(bytes) = usize::try_from(size)
            && self.pool.first_fill(dst, bytes)
            && let Some((first, len)) = inner_pages(dst as usize, bytes)
        {
            // Advice only: a kernel without MADV_POPULATE_WRITE (before 5.14)
            // refuses it, and the copy then faults the pages in itself.
            // SAFETY: whole pages inside a live device block of this plugin that the copy which follows overwrites; populating faults them in writable and keeps their contents.
            unsafe { libc::madvise(first as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) };
        }
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy(src as *const u8, dst as usize as *mut u8, size as usize) };
        Ok(())
    }

    fn image(&self, handle: ImageHandle) -> Result<std::sync::Arc<LoadedImage>> {
        self.images.lock().get(handle).cloned().flatten().ok_or_else(|| OffloadError::Internal(format!("unknown image handle {handle}")))
    }

    /// Writes `bytes` to an anonymous memory file and returns a path that
    /// `dlopen` accepts, plus the descriptor to close after loading.
    fn memfd_with(bytes: &[u8], device: usize) -> Result<(String, libc::c_int)> {
        let name = CString::new(format!("omptarget-rs-image-dev{device}")).expect("invariant: no NUL");
        // SAFETY: `name` is a valid C string; flags are valid for memfd_create.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(load_error(format!("memfd_create: {}", std::io::Error::last_os_error())));
        }
        let mut written = 0;
        while written < bytes.len() {
            let rest = &bytes[written..];
            // SAFETY: `rest` is a valid readable buffer of `rest.len()` bytes; fd is open.
            let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
            if n <= 0 {
                let err = std::io::Error::last_os_error();
                // SAFETY: fd was returned by memfd_create above and not closed yet.
                unsafe { libc::close(fd) };
                return Err(load_error(format!("writing the image to memfd: {err}")));
            }
            written += n as usize;
        }
        // The process's own number, not `self`: the path is what ld.so
        // records in its link map, and a debugger reads it from there and
        // opens it in its own process, where /proc/self/fd/N is one of the
        // debugger's descriptors (gdb then blocks on it, e.g. its terminal).
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        Ok((format!("/proc/{pid}/fd/{fd}"), fd))
    }
}

impl Plugin for HostPlugin {
    fn name(&self) -> &'static str {
        "x86_64"
    }

    fn is_compatible(&self, image: &[u8]) -> bool {
        elf_ident(image).is_ok_and(|e| e.machine == machine::X86_64)
    }

    fn number_of_devices(&self) -> usize {
        NUM_DEVICES
    }

    fn load_binary(&self, device: usize, image: &[u8]) -> Result<ImageHandle> {
        check_image(image)?;
        let (path, fd) = Self::memfd_with(image, device)?;
        let lib = {
            let _loading = LOADER.lock();
            // SAFETY: loading a shared object runs its constructors; the image was registered by the program as its own device code for this target.
            unsafe { libloading::os::unix::Library::open(Some(&path), libc::RTLD_NOW | libc::RTLD_LOCAL) }
        };
        // The descriptor stays open while the image is loaded: ld.so
        // recognises already-loaded objects by path, and a reused
        // /proc/self/fd/N would hand the next device this device's copy
        // (and its globals) instead of a fresh one.
        let mut handle = match lib {
            Ok(h) => h,
            Err(e) => {
                // SAFETY: fd is ours and nothing was loaded from it.
                unsafe { libc::close(fd) };
                return Err(dlopen_error(&e, &path));
            }
        };
        let slots = bind::slots(image);
        if !slots.is_empty() {
            let (lib, base) = load_base(handle);
            handle = lib;
            let bound = base.and_then(|base| {
                // SAFETY: `base` is this fresh copy's load base, loaded with RTLD_NOW from `image` (whose `slots` these are), not yet handed to anyone.
                unsafe { bind::bind(base, device, &slots) }
            });
            match bound {
                Ok(()) => crate::debug!("host plugin: bound omp_get_device_num at {} places for device {device}", slots.len()),
                // The image still runs; its regions then get libomp's answer (22.1's).
                Err(e) => crate::base::diag::report(&format!(
                    "host device {device}: omp_get_device_num() in its regions answers the initial device: {e}"
                )),
            }
        }
        let loaded = std::sync::Arc::new(LoadedImage { handle: Some(handle), bytes: image.to_vec(), fd });
        let mut images = self.images.lock();
        let slot = match images.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                images.push(None);
                images.len() - 1
            }
        };
        images[slot] = Some(loaded);
        crate::debug!("host plugin: loaded image of {} bytes on device {device} as handle {slot}", image.len());
        Ok(slot)
    }

    /// Host images have no device destructors to run, and a kernel of a
    /// straggling thread may still be running at exit: they stay loaded.
    fn unload_at_exit(&self) -> bool {
        false
    }

    fn unload_binary(&self, device: usize, image: ImageHandle) -> Result<()> {
        // The image goes (dlclose, its memfd, its copy) once the last user of
        // its `Arc` is done; the runtime unloads only unreachable images.
        let img = self.images.lock().get_mut(image).and_then(Option::take);
        match img {
            Some(_) => {
                crate::debug!("host plugin: unloaded image {image} on device {device}");
                Ok(())
            }
            None => Err(OffloadError::Internal(format!("unknown image handle {image}"))),
        }
    }

    fn get_function(&self, _device: usize, image: ImageHandle, name: &str) -> Result<KernelHandle> {
        let img = self.image(image)?;
        // SAFETY: the symbol is only used as an address; it is called through `call_kernel` whose contract the runtime upholds.
        let sym = img.handle.as_ref().map(|h| unsafe { h.get::<*const ()>(name.as_bytes()) });
        match sym {
            Some(Ok(s)) => Ok(s.as_raw_ptr() as u64),
            _ => Err(OffloadError::NotInImage(format!("failed to load global '{name}'"))),
        }
    }

    fn get_global(&self, _device: usize, image: ImageHandle, name: &str, size: u64) -> Result<u64> {
        let img = self.image(image)?;
        if let Some(elf_size) = elf_symbol_size(&img.bytes, name)
            && elf_size != size
            && elf_size != 0
        {
            return Err(OffloadError::BadImage(format!(
                "transfer failed because global symbol '{name}' has {elf_size} bytes in the ELF image but {size} bytes on the host"
            )));
        }
        // SAFETY: the symbol is only used as an address.
        let sym = img.handle.as_ref().map(|h| unsafe { h.get::<*const ()>(name.as_bytes()) });
        match sym {
            Some(Ok(s)) => Ok(s.as_raw_ptr() as u64),
            _ => Err(OffloadError::MissingSymbol {
                lib: "the device image".into(),
                symbol: format!("failed to find global symbol '{name}' in the ELF image"),
            }),
        }
    }

    fn alloc(&self, _device: usize, size: u64, _kind: AllocKind) -> Result<u64> {
        let bytes = usize::try_from(size).map_err(|_| OffloadError::OutOfDeviceMemory { bytes: size })?;
        // A match, not `ok_or`: the error value is built (and dropped) only on failure.
        match self.pool.alloc(bytes, &self.backing) {
            Some(p) => Ok(p),
            None => Err(OffloadError::OutOfDeviceMemory { bytes: size }),
        }
    }

    fn free(&self, _device: usize, ptr: u64, _kind: AllocKind) -> Result<()> {
        // The runtime frees only pointers this plugin's `alloc` returned, once.
        self.pool.free(ptr, &self.backing);
        Ok(())
    }

    fn alloc_plain(&self, _device: usize, size: u64) -> Option<u64> {
        self.pool.alloc(usize::try_from(size).ok()?, &self.backing)
    }

    fn free_plain(&self, _device: usize, ptr: u64, size: u64) -> bool {
        self.pool.free_sized(ptr, size as usize, &self.backing);
        true
    }

    fn release_cached(&self) {
        self.pool.release_kept(&self.backing);
    }

    unsafe fn submit(&self, _device: usize, dst: u64, src: usize, size: u64) -> Result<()> {
        if size >= FIRST_FILL_FROM {
            // A jump: small copies keep their frame-less path.
            // SAFETY: forwarded contract.
            return unsafe { self.copy_large(dst, src, size) };
        }
        // SAFETY: src is readable (caller's contract); dst is a device allocation of this plugin, i.e. host memory of at least `size` bytes.
        unsafe { move_bytes(dst as usize as *mut u8, src as *const u8, size as usize) };
        Ok(())
    }

    unsafe fn retrieve(&self, _device: usize, dst: usize, src: u64, size: u64) -> Result<()> {
        // SAFETY: dst is writable (caller's contract); src is a device allocation.
        unsafe { move_bytes(dst as *mut u8, src as usize as *const u8, size as usize) };
        Ok(())
    }

    fn exchange(&self, _src_device: usize, src: u64, _dst_device: usize, dst: u64, size: u64) -> Result<()> {
        if size >= FIRST_FILL_FROM {
            // SAFETY: `src` is a device address of this plugin, i.e. host memory of `size` bytes, as the runtime checked.
            return unsafe { self.copy_large(dst, src as usize, size) };
        }
        // SAFETY: both are device addresses of this plugin, i.e. host memory, with `size` bytes as the runtime checked.
        unsafe { std::ptr::copy(src as usize as *const u8, dst as usize as *mut u8, size as usize) };
        Ok(())
    }

    fn memset(&self, _device: usize, ptr: u64, value: u8, size: u64) -> Result<()> {
        // SAFETY: ptr is a device address (host memory) of at least `size` bytes.
        unsafe { std::ptr::write_bytes(ptr as usize as *mut u8, value, size as usize) };
        Ok(())
    }

    fn has_queues(&self) -> bool {
        crate::base::config().host_queues.is_some()
    }

    fn memory_is_host(&self) -> bool {
        true
    }

    fn queue_acquire(&self, _device: usize) -> Result<QueueHandle> {
        Ok(self.queues.acquire(crate::base::config().host_queues.unwrap_or(0)))
    }

    fn queue_synchronize(&self, _device: usize, queue: QueueHandle) -> Result<()> {
        self.queues.synchronize(queue)
    }

    fn queue_query(&self, _device: usize, queue: QueueHandle) -> Result<bool> {
        self.queues.query(queue)
    }

    fn queue_release(&self, _device: usize, queue: QueueHandle) {
        self.queues.release(queue)
    }

    unsafe fn submit_async(&self, _device: usize, dst: u64, src: usize, size: u64, queue: QueueHandle) -> Result<()> {
        self.queues.copy(queue, dst as usize, src, size)
    }

    unsafe fn retrieve_async(&self, _device: usize, dst: usize, src: u64, size: u64, queue: QueueHandle) -> Result<()> {
        self.queues.copy(queue, dst, src as usize, size)
    }

    fn launch_async(
        &self,
        device: usize,
        kernel: KernelHandle,
        name: &str,
        args: &[u64],
        _dims: &LaunchDims,
        queue: QueueHandle,
    ) -> Result<()> {
        crate::base::diag::plugin_info(crate::base::config::info::PLUGIN_KERNEL, device, || {
            format!("Launching kernel {name} with [1,1,1] blocks and [1,1,1] threads in Generic mode")
        });
        check_arg_count(name, args)?;
        crate::debug!("host plugin: queueing {name} at {kernel:#x} with {} arguments {args:x?}", args.len());
        self.queues.launch(queue, kernel, args)
    }

    fn event_record(&self, _device: usize, queue: QueueHandle) -> Result<EventHandle> {
        self.queues.record(queue)
    }

    fn event_wait(&self, _device: usize, event: EventHandle, queue: QueueHandle) -> Result<()> {
        self.queues.wait(event, queue)
    }

    fn event_release(&self, _device: usize, event: EventHandle) {
        self.queues.release_event(event)
    }

    /// One call of the region function per launch (the INFO line's grid).
    fn launched_grid(&self, _device: usize, _kernel: KernelHandle, _dims: &LaunchDims) -> Option<([u32; 3], [u32; 3])> {
        Some(([1, 1, 1], [1, 1, 1]))
    }

    fn launch(&self, device: usize, kernel: KernelHandle, name: &str, args: &[u64], _dims: &LaunchDims) -> Result<()> {
        crate::base::diag::plugin_info(crate::base::config::info::PLUGIN_KERNEL, device, || {
            format!("Launching kernel {name} with [1,1,1] blocks and [1,1,1] threads in Generic mode")
        });
        check_arg_count(name, args)?;
        crate::debug!("host plugin: calling {name} at {kernel:#x} with {} arguments {args:x?}", args.len());
        // SAFETY: `kernel` was resolved from a loaded image as a kernel symbol; clang's host kernels take only pointer-sized parameters.
        unsafe { call::call_kernel(kernel as usize, args) };
        Ok(())
    }

    fn launches_plain(&self) -> bool {
        true
    }

    fn launch_plain(
        &self,
        _device: usize,
        kernel: KernelHandle,
        slots: &[u64; super::PLAIN_LAUNCH_SLOTS],
        n: usize,
        _dims: &LaunchDims,
    ) -> bool {
        // SAFETY: as in `launch`: a kernel symbol of a loaded image, pointer-sized parameters.
        unsafe { call::call_kernel_slots(kernel as usize, slots, n) }
    }

    fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        held.mutex(&LOADER)
            && held.mutex(&cpu::CPU_INIT)
            && held.mutex(&self.images)
            && self.queues.lock_for_fork(held)
            && self.pool.lock_for_fork(held)
    }

    fn forked_child(&self) {
        self.queues.forked_child();
    }

    fn device_exposed(&self, device: usize, id: usize) {
        bind::set_device_id(device, id);
    }

    fn compute_unit_kind(&self, _device: usize) -> String {
        "generic-64bit".into()
    }

    fn uid(&self, device: usize) -> String {
        format!("x86_64-{device}")
    }

    fn properties(&self, _device: usize) -> super::DeviceProperties {
        cpu::properties().clone()
    }

    fn device_info(&self, device: usize) -> String {
        format!("    Device Type    Generic-elf-64bit\n    UID            {}\n", self.uid(device))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_bytes_is_memmove() {
        // Every length up to past the inline sizes, every shift of an
        // overlapping source and destination within one buffer, both ways.
        for n in 0..40usize {
            for src_at in 0..24usize {
                for dst_at in 0..24usize {
                    let init: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37).wrapping_add(1)).collect();
                    let (mut got, mut want) = (init.clone(), init);
                    let (g, w) = (got.as_mut_ptr(), want.as_mut_ptr());
                    // SAFETY: both ranges lie inside the 64-byte buffers (24 + 40 = 64).
                    unsafe {
                        move_bytes(g.add(dst_at), g.add(src_at), n);
                        std::ptr::copy(w.add(src_at), w.add(dst_at), n);
                    }
                    assert_eq!(got, want, "n {n}, from {src_at} to {dst_at}");
                }
            }
        }
    }

    #[test]
    fn inner_pages_of_a_range() {
        assert_eq!(inner_pages(4096, 8192), Some((4096, 8192)));
        assert_eq!(inner_pages(4000, 8192), Some((4096, 4096)));
        assert_eq!(inner_pages(4000, 4000), None);
        assert_eq!(inner_pages(usize::MAX - 10, 100), None);
    }
}
