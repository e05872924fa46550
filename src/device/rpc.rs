//! Host-side RPC handlers registered by an API (liboffload's
//! `olPlatformRegisterRPCCallback`): per plugin, the callbacks a plugin's
//! RPC server calls, in registration order, for an opcode it does not
//! handle itself. API-neutral: a handler is a C function taking the
//! server's port and the number of lanes and returning an RPC status.
//!
//! The CPU devices run kernels as host code and have no device-side RPC
//! client, so nothing calls their handlers; the GPU plugins have no RPC
//! server yet. The list is where their server will look ([`handlers`]).

use core::ffi::c_void;
use parking_lot::Mutex;

/// An RPC handler: `(port, lanes) -> status`.
pub type Handler = unsafe extern "C" fn(port: *mut c_void, lanes: u32) -> u32;

/// (plugin name, handler), in registration order.
static HANDLERS: Mutex<Vec<(&'static str, usize)>> = Mutex::new(Vec::new());

/// Registers `handler` for the devices of `plugin`; registering the same
/// handler again for the same plugin keeps one entry.
pub fn register(plugin: &'static str, handler: Handler) {
    let mut h = HANDLERS.lock();
    let entry = (plugin, handler as usize);
    if !h.contains(&entry) {
        h.push(entry);
    }
}

/// The handlers registered for `plugin`, in registration order.
pub fn handlers(plugin: &str) -> Vec<Handler> {
    HANDLERS
        .lock()
        .iter()
        .filter(|(p, _)| *p == plugin)
        .map(|&(_, f)| {
            // SAFETY: every entry was stored from a `Handler` by `register`.
            unsafe { std::mem::transmute::<usize, Handler>(f) }
        })
        .collect()
}

/// Fork safety: the handler list.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&HANDLERS)
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn one(_: *mut c_void, lanes: u32) -> u32 {
        lanes
    }

    unsafe extern "C" fn two(_: *mut c_void, _: u32) -> u32 {
        2
    }

    #[test]
    fn handlers_are_kept_per_plugin_in_order_once() {
        register("rpc-test-plugin", one);
        register("rpc-test-plugin", two);
        register("rpc-test-plugin", one);
        let h = handlers("rpc-test-plugin");
        assert_eq!(h.len(), 2);
        // SAFETY: the test's own handlers, which ignore the port.
        assert_eq!(unsafe { h[0](std::ptr::null_mut(), 32) }, 32);
        // SAFETY: as above.
        assert_eq!(unsafe { h[1](std::ptr::null_mut(), 32) }, 2);
        assert!(handlers("rpc-test-other").is_empty());
    }
}
