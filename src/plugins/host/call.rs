//! Calling a host-plugin kernel with a run-time number of pointer-sized
//! arguments (what LLVM's host plugin uses libffi for). A small System V
//! x86-64 trampoline: the first six arguments go in registers, the rest on
//! the stack, keeping the stack 16-byte aligned at the call.

#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl omptarget_rs_call_kernel",
    ".hidden omptarget_rs_call_kernel",
    ".type omptarget_rs_call_kernel,@function",
    "omptarget_rs_call_kernel:",
    ".cfi_startproc",
    "push rbp",
    ".cfi_def_cfa_offset 16",
    ".cfi_offset rbp, -16",
    "mov rbp, rsp",
    ".cfi_def_cfa_register rbp",
    "push r12",
    "push r13",
    "mov r12, rdi", // kernel
    "mov r13, rsi", // args (at least 6 readable slots)
    "mov rcx, rdx", // n
    // Stack arguments: n - 6 when n > 6. Keep rsp 16-aligned after pushing them.
    "xor eax, eax",
    "cmp rcx, 6",
    "jbe 2f",
    "lea rax, [rcx - 6]",
    "2:",
    "test al, 1",
    "jz 3f",
    "sub rsp, 8",
    "3:",
    "4:",
    "cmp rcx, 6",
    "jbe 5f",
    "dec rcx",
    "push qword ptr [r13 + rcx*8]",
    "jmp 4b",
    "5:",
    "mov rdi, [r13]",
    "mov rsi, [r13 + 8]",
    "mov rdx, [r13 + 16]",
    "mov rcx, [r13 + 24]",
    "mov r8, [r13 + 32]",
    "mov r9, [r13 + 40]",
    "xor eax, eax",
    "call r12",
    "lea rsp, [rbp - 16]",
    "pop r13",
    "pop r12",
    "pop rbp",
    ".cfi_def_cfa rsp, 8",
    "ret",
    ".cfi_endproc",
    ".size omptarget_rs_call_kernel, . - omptarget_rs_call_kernel",
);

#[cfg(target_arch = "x86_64")]
unsafe extern "C" {
    fn omptarget_rs_call_kernel(kernel: usize, args: *const u64, n: usize);
}

/// Calls `kernel(args[0], args[1], ...)`.
///
/// # Safety
/// `kernel` must be the address of a C-ABI function whose parameters are all
/// pointer-sized integers or pointers (it may declare fewer than `args.len()`),
/// and calling it with these values must be sound.
#[cfg(target_arch = "x86_64")]
pub unsafe fn call_kernel(kernel: usize, args: &[u64]) {
    let mut padded = [0u64; 6];
    let regs: &[u64] = if args.len() >= 6 {
        args
    } else {
        // Element by element: a variable-length slice copy would call memcpy.
        for (slot, a) in padded.iter_mut().zip(args) {
            *slot = *a;
        }
        &padded
    };
    // SAFETY: `regs` holds at least 6 readable u64 and `args.len()` <= regs.len(); the trampoline reads only those slots; the kernel contract is the caller's.
    unsafe { omptarget_rs_call_kernel(kernel, regs.as_ptr(), args.len()) }
}

/// [`call_kernel`] with the first `n` of the plain-launch argument slots
/// (`PLAIN_LAUNCH_SLOTS`), without copying them (the trampoline reads six
/// register slots, then `n - 6` stack slots). Returns false, calling
/// nothing, when `n` exceeds the slots.
///
/// # Safety
/// As [`call_kernel`], for the first `n` slots.
#[cfg(target_arch = "x86_64")]
#[inline]
pub unsafe fn call_kernel_slots(kernel: usize, slots: &[u64; crate::plugins::PLAIN_LAUNCH_SLOTS], n: usize) -> bool {
    if n > slots.len() {
        return false;
    }
    // SAFETY: PLAIN_LAUNCH_SLOTS (16) readable slots, at least the 6 register slots, and n <= that; the kernel contract is the caller's.
    unsafe { omptarget_rs_call_kernel(kernel, slots.as_ptr(), n) };
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    static SUM: AtomicU64 = AtomicU64::new(0);

    extern "C" fn nine(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64, g: u64, h: u64, i: u64) {
        let v = [a, b, c, d, e, f, g, h, i];
        SUM.store(v.iter().enumerate().map(|(k, x)| (k as u64 + 1) * x).sum(), Ordering::SeqCst);
    }
    extern "C" fn two(a: u64, b: u64) {
        SUM.store(a * 10 + b, Ordering::SeqCst);
    }

    #[test]
    fn passes_register_and_stack_arguments() {
        for n in [9usize, 10] {
            let args: Vec<u64> = (1..=n as u64).collect();
            // SAFETY: `nine` takes nine u64 and ignores extras.
            unsafe { call_kernel(nine as *const () as usize, &args) };
            let want: u64 = (1..=9u64).map(|k| k * k).sum();
            assert_eq!(SUM.load(Ordering::SeqCst), want, "n = {n}");
        }
        // SAFETY: `two` takes two u64.
        unsafe { call_kernel(two as *const () as usize, &[4, 2]) };
        assert_eq!(SUM.load(Ordering::SeqCst), 42);
        let mut slots = [0u64; crate::plugins::PLAIN_LAUNCH_SLOTS];
        for (k, s) in slots.iter_mut().enumerate() {
            *s = k as u64 + 1;
        }
        // SAFETY: `two` takes two u64 and ignores the other registers.
        assert!(unsafe { call_kernel_slots(two as *const () as usize, &slots, 2) });
        assert_eq!(SUM.load(Ordering::SeqCst), 12);
        // SAFETY: `nine` takes nine u64: six in registers, three on the stack.
        assert!(unsafe { call_kernel_slots(nine as *const () as usize, &slots, 9) });
        assert_eq!(SUM.load(Ordering::SeqCst), (1..=9u64).map(|k| k * k).sum::<u64>());
        // SAFETY: not called: n exceeds the slots.
        assert!(!unsafe { call_kernel_slots(two as *const () as usize, &slots, slots.len() + 1) });
    }
}
