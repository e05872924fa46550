//! The shared-memory protocol of LLVM 22.1's RPC (`libc/shared/rpc.h`),
//! server side, written from its description (no LLVM code).
//!
//! One buffer in host memory the device can reach holds, for `n` ports and
//! `lanes` lanes per port (the warp or wavefront size):
//!
//! ```text
//! u32    client_outbox[n]   (offset 0: the client writes, the server reads: our inbox)
//! u32    client_inbox[n]    (offset 4n: the server writes: our outbox)
//! Header header[n]          (8-aligned: {u64 lane mask, u32 opcode}, 16 bytes)
//! Buffer packet[n][lanes]   (8-aligned: 64 bytes each)
//! ```
//!
//! A port belongs to the client while its two mailbox bits are equal and to
//! the server while they differ; each side gives the port to the other by
//! flipping its own outbox bit. The client opens a port (writes opcode and
//! lane mask), then both sides alternate `send`/`recv` as the opcode's
//! protocol says; the server's `close` hands a port it still owns back.
//!
//! [`Process`] and [`Port`] have the layouts of LLVM's `rpc::Process<true>`
//! and `rpc::Port<true>`, so a callback registered through
//! `olPlatformRegisterRPCCallback` that was compiled against LLVM's
//! header-only `rpc.h` works on the port we hand it.
//!
//! Everything read from the buffer is untrusted: the lane mask is cut to the
//! port's lanes, sizes are bounded, and a client that stops answering in the
//! middle of a call makes the wait fail after a timeout instead of hanging.

use std::sync::atomic::{AtomicU32, Ordering, fence};
use std::time::{Duration, Instant};

/// LLVM's `rpc::MAX_PORT_COUNT`.
pub const MAX_PORT_COUNT: u32 = 4096;
/// Words of the per-process lock bitfield (`MAX_PORT_COUNT / 32`).
pub const LOCK_WORDS: usize = (MAX_PORT_COUNT / 32) as usize;
/// Bytes of one packet slot (`rpc::Buffer`).
pub const PACKET_BYTES: u64 = 64;
/// Bytes of `rpc::Client` (the `__llvm_rpc_client` object): port count, four
/// pointers and the lock bitfield.
pub const CLIENT_BYTES: usize = 8 + 4 * 8 + LOCK_WORDS * 4;

/// `rpc::Status`.
pub const RPC_SUCCESS: u32 = 0;
pub const RPC_ERROR: u32 = 0x1000;
pub const RPC_UNHANDLED_OPCODE: u32 = 0x1001;

/// `rpc::Header`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Header {
    pub mask: u64,
    pub opcode: u32,
}

/// `rpc::Buffer`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Buffer {
    pub data: [u64; 8],
}

/// `rpc::Process<true>` (the server's view of the buffer).
#[repr(C)]
pub struct Process {
    pub port_count: u32,
    pub inbox: *const u32,
    pub outbox: *mut u32,
    pub header: *mut Header,
    pub packet: *mut Buffer,
    pub lock: [u32; LOCK_WORDS],
}

/// `rpc::Port<true>`: what a callback receives.
#[repr(C)]
pub struct Port {
    pub process: *mut Process,
    pub lane_mask: u64,
    pub lane_size: u32,
    pub index: u32,
    pub out: u32,
    pub receive: bool,
    pub owns_buffer: bool,
}

const _: () = assert!(std::mem::size_of::<Header>() == 16);
const _: () = assert!(std::mem::size_of::<Buffer>() == 64);
const _: () = assert!(std::mem::size_of::<Process>() == CLIENT_BYTES);
const _: () = assert!(std::mem::size_of::<Port>() == 32);

const fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

/// Bytes of one mailbox array.
pub const fn mailbox_bytes(ports: u32) -> u64 {
    ports as u64 * 4
}

/// Offset of the headers.
pub const fn header_offset(ports: u32) -> u64 {
    align_up(2 * mailbox_bytes(ports), 8)
}

/// Offset of the packets.
pub const fn packet_offset(ports: u32) -> u64 {
    align_up(header_offset(ports) + ports as u64 * 16, 8)
}

/// Bytes of the whole buffer (`rpc::Server::allocation_size`).
pub const fn allocation_size(lanes: u32, ports: u32) -> u64 {
    packet_offset(ports) + ports as u64 * lanes as u64 * PACKET_BYTES
}

/// The bytes of `rpc::Client` for a buffer at device address `base`: what
/// the runtime writes into the image's `__llvm_rpc_client`.
pub fn client_bytes(ports: u32, base: u64) -> [u8; CLIENT_BYTES] {
    let mut c = [0u8; CLIENT_BYTES];
    c[0..4].copy_from_slice(&ports.to_le_bytes());
    let ptrs = [base, base + mailbox_bytes(ports), base + header_offset(ports), base + packet_offset(ports)];
    for (i, p) in ptrs.iter().enumerate() {
        c[8 + i * 8..16 + i * 8].copy_from_slice(&p.to_le_bytes());
    }
    c
}

impl Process {
    /// The server's process over the buffer at host address `base`.
    pub fn new(ports: u32, base: usize) -> Process {
        Process {
            port_count: ports,
            inbox: (base + mailbox_bytes(ports) as usize) as *const u32,
            outbox: base as *mut u32,
            header: (base + header_offset(ports) as usize) as *mut Header,
            packet: (base + packet_offset(ports) as usize) as *mut Buffer,
            lock: [0; LOCK_WORDS],
        }
    }

    fn mailbox(p: *const u32, index: u32) -> &'static AtomicU32 {
        // SAFETY: callers pass index < port_count; the mailbox arrays hold port_count aligned u32s inside the live buffer, which outlives every port (the server is detached only when no port is open).
        unsafe { AtomicU32::from_ptr(p.add(index as usize) as *mut u32) }
    }

    fn load_inbox(&self, index: u32) -> u32 {
        Self::mailbox(self.inbox, index).load(Ordering::Relaxed) & 1
    }

    fn load_outbox(&self, index: u32) -> u32 {
        Self::mailbox(self.outbox, index).load(Ordering::Relaxed) & 1
    }

    fn invert_outbox(&self, index: u32, current: u32) -> u32 {
        let inverted = (current == 0) as u32;
        fence(Ordering::Release);
        Self::mailbox(self.outbox, index).store(inverted, Ordering::Relaxed);
        inverted
    }

    /// The server may not touch the port while its bits are equal.
    fn unavailable(inbox: u32, outbox: u32) -> bool {
        inbox == outbox
    }

    /// A port with a pending request from `start` on, locked for us.
    pub fn try_open(&mut self, lanes: u32, start: u32) -> Option<Port> {
        for index in start..self.port_count {
            let (i, o) = (self.load_inbox(index), self.load_outbox(index));
            if Self::unavailable(i, o) {
                continue;
            }
            let (w, bit) = ((index / 32) as usize, 1u32 << (index % 32));
            if self.lock[w] & bit != 0 {
                continue;
            }
            self.lock[w] |= bit;
            fence(Ordering::Acquire);
            let header = self.header(index);
            let all = if lanes >= 64 { u64::MAX } else { (1u64 << lanes) - 1 };
            return Some(Port {
                process: self as *mut Process,
                lane_mask: header.mask & all,
                lane_size: lanes,
                index,
                out: o,
                receive: false,
                owns_buffer: true,
            });
        }
        None
    }

    fn header(&self, index: u32) -> Header {
        // SAFETY: index < port_count; the headers lie inside the live buffer; a volatile read of plain data the client wrote before handing us the port.
        unsafe { std::ptr::read_volatile(self.header.add(index as usize)) }
    }
}

/// Why a call could not be served to its end.
#[derive(Debug)]
pub enum Stall {
    /// The client did not hand the port back within the timeout.
    Timeout(Duration),
    /// The client's data cannot be right (e.g. an absurd size).
    Corrupt(String),
}

/// Sizes above this are taken for a corrupt mailbox rather than drained.
pub const DRAIN_LIMIT: u64 = 1 << 32;

/// How long the server waits for the client inside one call
/// (`OMPTARGET_RS_RPC_TIMEOUT`, seconds; default 60).
pub fn timeout() -> Duration {
    static T: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *T.get_or_init(|| {
        let s = std::env::var("OMPTARGET_RS_RPC_TIMEOUT").ok().and_then(|v| v.trim().parse::<f64>().ok());
        Duration::from_secs_f64(s.filter(|s| *s > 0.0).unwrap_or(60.0))
    })
}

impl Port {
    fn process(&self) -> &Process {
        // SAFETY: a port is made by `Process::try_open` from a process that outlives it (the server keeps both while the call runs).
        unsafe { &*self.process }
    }

    /// The opcode the client opened the port with.
    pub fn opcode(&self) -> u32 {
        self.process().header(self.index).opcode
    }

    /// The active lanes, in order.
    pub fn lanes(&self) -> impl Iterator<Item = u32> + use<> {
        let mask = self.lane_mask;
        (0..64u32).filter(move |l| mask & (1u64 << l) != 0)
    }

    fn slot(&self, lane: u32) -> *mut Buffer {
        debug_assert!(lane < self.lane_size);
        // SAFETY: index < port_count and lane < lane_size (lane_mask was cut to lane_size bits), so the slot lies inside the buffer's packets.
        unsafe { self.process().packet.add(self.index as usize * self.lane_size as usize + lane as usize) }
    }

    /// A copy of lane `lane`'s packet.
    pub fn read(&self, lane: u32) -> Buffer {
        // SAFETY: `slot` is inside the live buffer and 8-aligned; volatile: the device writes it.
        unsafe { std::ptr::read_volatile(self.slot(lane)) }
    }

    /// Writes lane `lane`'s packet.
    pub fn write(&self, lane: u32, b: &Buffer) {
        // SAFETY: as in `read`; we own the port while we write.
        unsafe { std::ptr::write_volatile(self.slot(lane), *b) }
    }

    fn wait(&self, out: u32, mut inbox: u32) -> Result<(), Stall> {
        let p = self.process();
        let mut spins = 0u32;
        let mut start: Option<Instant> = None;
        while Process::unavailable(inbox, out) {
            spins += 1;
            if spins < 256 {
                std::hint::spin_loop();
            } else if spins < 1024 {
                std::thread::yield_now();
            } else {
                let s = *start.get_or_insert_with(Instant::now);
                if s.elapsed() > timeout() {
                    return Err(Stall::Timeout(timeout()));
                }
                std::thread::sleep(Duration::from_micros(20));
            }
            inbox = p.load_inbox(self.index);
        }
        fence(Ordering::Acquire);
        Ok(())
    }

    /// `Port::recv`: waits for the client's packet and reads it.
    pub fn recv(&mut self, mut use_: impl FnMut(u32, &Buffer)) -> Result<(), Stall> {
        if self.receive {
            self.out = self.process().invert_outbox(self.index, self.out);
            self.owns_buffer = false;
        }
        let inbox = if self.owns_buffer { self.out ^ 1 } else { self.process().load_inbox(self.index) };
        self.wait(self.out, inbox)?;
        for l in self.lanes() {
            use_(l, &self.read(l));
        }
        self.receive = true;
        self.owns_buffer = true;
        Ok(())
    }

    /// `Port::send`: fills the packet and hands the port to the client.
    pub fn send(&mut self, mut fill: impl FnMut(u32, &mut Buffer)) -> Result<(), Stall> {
        let inbox = if self.owns_buffer { self.out ^ 1 } else { self.process().load_inbox(self.index) };
        self.wait(self.out, inbox)?;
        for l in self.lanes() {
            let mut b = self.read(l);
            fill(l, &mut b);
            self.write(l, &b);
        }
        self.out = self.process().invert_outbox(self.index, self.out);
        self.owns_buffer = false;
        self.receive = false;
        Ok(())
    }

    /// `Port::recv_and_send`: `work` changes the packet in place, which goes back.
    pub fn recv_and_send(&mut self, mut work: impl FnMut(u32, &mut Buffer)) -> Result<(), Stall> {
        let mut got = [Buffer { data: [0; 8] }; 64];
        self.recv(|l, b| got[l as usize] = *b)?;
        for l in self.lanes() {
            work(l, &mut got[l as usize]);
        }
        self.send(|l, b| *b = got[l as usize])
    }

    /// `Port::recv_n`: one byte string per active lane (empty for the
    /// others). A lane announcing more than `max` bytes is refused (its
    /// data is drained and dropped) and reported in the second value.
    pub fn recv_n(&mut self, max: u64) -> Result<(Vec<Vec<u8>>, Option<u64>), Stall> {
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); self.lane_size as usize];
        let mut sizes = [0u64; 64];
        let mut too_big = None;
        self.recv(|l, b| {
            let size = b.data[0];
            sizes[l as usize] = size;
            if size > max {
                too_big = Some(size);
                return;
            }
            let v = &mut out[l as usize];
            v.reserve_exact(size as usize);
            let first = size.min(56) as usize;
            v.extend_from_slice(&bytes_of(b)[8..8 + first]);
        })?;
        let most = self.lanes().map(|l| sizes[l as usize]).max().unwrap_or(0);
        if most > DRAIN_LIMIT {
            // No client sends that much: the mailbox is corrupt.
            return Err(Stall::Corrupt(format!("a lane announced {most} bytes")));
        }
        let mut idx = 56u64;
        while idx < most {
            self.recv(|l, b| {
                let size = sizes[l as usize];
                if idx < size && size <= max {
                    let len = (size - idx).min(64) as usize;
                    out[l as usize].extend_from_slice(&bytes_of(b)[..len]);
                }
            })?;
            idx += 64;
        }
        Ok((out, too_big))
    }

    /// `Port::close`: hands back a port the server still owns, unlocks it.
    pub fn close(&mut self) {
        if self.owns_buffer {
            self.out = self.process().invert_outbox(self.index, self.out);
            self.owns_buffer = false;
        }
        // SAFETY: the port's process outlives it; only the server thread touches the server's lock bits.
        let p = unsafe { &mut *self.process };
        p.lock[(self.index / 32) as usize] &= !(1u32 << (self.index % 32));
    }
}

/// The 64 bytes of a packet.
pub fn bytes_of(b: &Buffer) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (i, w) in b.data.iter().enumerate() {
        out[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_llvm() {
        // 4 ports, 32 lanes: mailboxes 16 + 16, headers at 32 (4 x 16), packets at 96.
        assert_eq!(header_offset(4), 32);
        assert_eq!(packet_offset(4), 96);
        assert_eq!(allocation_size(32, 4), 96 + 4 * 32 * 64);
        // Odd port counts keep 8-byte alignment.
        assert_eq!(header_offset(3), 24);
        assert_eq!(packet_offset(3), 72);
        let c = client_bytes(4, 0x1000);
        assert_eq!(u32::from_le_bytes(c[0..4].try_into().unwrap()), 4);
        assert_eq!(u64::from_le_bytes(c[8..16].try_into().unwrap()), 0x1000);
        assert_eq!(u64::from_le_bytes(c[16..24].try_into().unwrap()), 0x1010);
        assert_eq!(u64::from_le_bytes(c[24..32].try_into().unwrap()), 0x1020);
        assert_eq!(u64::from_le_bytes(c[32..40].try_into().unwrap()), 0x1060);
        assert_eq!(CLIENT_BYTES, 552);
    }

    #[test]
    fn a_request_round_trip_on_host_memory() {
        let (ports, lanes) = (2u32, 4u32);
        let mut mem = vec![0u64; allocation_size(lanes, ports) as usize / 8];
        let base = mem.as_mut_ptr() as usize;
        let mut server = Process::new(ports, base);
        assert!(server.try_open(lanes, 0).is_none());
        // The client side, by hand: port 1, lanes 0 and 2, opcode 7, data 5.
        let hdr = (base + header_offset(ports) as usize + 16) as *mut Header;
        let pk = (base + packet_offset(ports) as usize) as *mut Buffer;
        // SAFETY: all inside `mem`.
        unsafe {
            *hdr = Header { mask: 0b101 | (1 << 40), opcode: 7 };
            (*pk.add(4)).data[0] = 5;
            (*pk.add(6)).data[0] = 6;
            *((base + 4) as *mut u32) = 0; // client inbox of port 1 (ours: outbox)
            *((base + 8 + 4) as *mut u32) = 1; // client outbox of port 1 (our inbox)
        }
        let mut port = server.try_open(lanes, 0).expect("pending");
        assert_eq!((port.index, port.opcode(), port.lane_mask), (1, 7, 0b101));
        port.recv_and_send(|l, b| b.data[0] += 10 * (l as u64 + 1)).unwrap();
        port.close();
        // SAFETY: inside `mem`.
        unsafe {
            assert_eq!((*pk.add(4)).data[0], 15);
            assert_eq!((*pk.add(6)).data[0], 36);
            assert_eq!(*((base + 4) as *const u32), 1, "the port went back to the client");
        }
        assert!(server.try_open(lanes, 0).is_none());
    }

    /// A minimal client (one lane per call) over the same buffer.
    struct TestClient {
        base: usize,
        ports: u32,
        lanes: u32,
        lock: Vec<AtomicU32>,
    }

    impl TestClient {
        fn mailbox(&self, which: u64, i: u32) -> &AtomicU32 {
            // SAFETY: i < ports; the mailboxes are aligned u32s inside the test's buffer.
            unsafe { AtomicU32::from_ptr((self.base + (which * mailbox_bytes(self.ports)) as usize + i as usize * 4) as *mut u32) }
        }

        /// open, send {value}, recv, close: what the device does for a user opcode.
        fn call(&self, lane: u32, value: u64) -> u64 {
            let mut i = 0;
            loop {
                let bit = 1 << (i % 32);
                if self.lock[(i / 32) as usize].fetch_or(bit, Ordering::Acquire) & bit == 0 {
                    let (inb, out) = (self.mailbox(0, i).load(Ordering::Acquire), self.mailbox(1, i).load(Ordering::Acquire));
                    if inb == out {
                        let hdr = (self.base + header_offset(self.ports) as usize) as *mut Header;
                        let slot = (self.base + packet_offset(self.ports) as usize) as *mut Buffer;
                        // SAFETY: index i < ports, lane < lanes: inside the buffer; we hold the port.
                        unsafe {
                            std::ptr::write_volatile(hdr.add(i as usize), Header { mask: 1 << lane, opcode: 9 });
                            (*slot.add((i * self.lanes + lane) as usize)).data[0] = value;
                        }
                        self.mailbox(1, i).store(out ^ 1, Ordering::Release);
                        while self.mailbox(0, i).load(Ordering::Acquire) != out ^ 1 {
                            std::hint::spin_loop();
                        }
                        // SAFETY: as above; the server handed the port back.
                        let r = unsafe { std::ptr::read_volatile(slot.add((i * self.lanes + lane) as usize)).data[0] };
                        self.lock[(i / 32) as usize].fetch_and(!bit, Ordering::Release);
                        return r;
                    }
                    self.lock[(i / 32) as usize].fetch_and(!bit, Ordering::Release);
                }
                i = (i + 1) % self.ports;
            }
        }
    }

    #[test]
    fn many_clients_at_once_each_get_their_own_answer() {
        let (ports, lanes) = (4u32, 4u32);
        let mem = vec![0u64; allocation_size(lanes, ports) as usize / 8];
        let base = mem.as_ptr() as usize;
        let client = TestClient { base, ports, lanes, lock: (0..1).map(|_| AtomicU32::new(0)).collect() };
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut server = Process::new(ports, base);
                while !done.load(Ordering::Acquire) {
                    while let Some(mut port) = server.try_open(lanes, 0) {
                        assert_eq!(port.opcode(), 9);
                        assert_eq!(port.lane_mask.count_ones(), 1);
                        port.recv_and_send(|_, b| b.data[0] = b.data[0] * 3 + 1).unwrap();
                        port.close();
                    }
                }
            });
            let workers: Vec<_> = (0..6u64)
                .map(|t| {
                    let c = &client;
                    s.spawn(move || (0..60u64).all(|k| c.call((t % 4) as u32, t * 1000 + k) == (t * 1000 + k) * 3 + 1))
                })
                .collect();
            let all_right = workers.into_iter().all(|w| w.join().unwrap());
            done.store(true, Ordering::Release);
            assert!(all_right);
        });
        drop(mem);
    }

    #[test]
    fn a_corrupt_mailbox_is_bounded() {
        let (ports, lanes) = (2u32, 2u32);
        let mut mem = vec![0u64; allocation_size(lanes, ports) as usize / 8];
        let base = mem.as_mut_ptr() as usize;
        let hdr = (base + header_offset(ports) as usize) as *mut Header;
        let pk = (base + packet_offset(ports) as usize) as *mut Buffer;
        // SAFETY: all inside `mem`. Port 0: every mask bit set, an absurd size.
        unsafe {
            *hdr = Header { mask: u64::MAX, opcode: 1 };
            (*pk).data[0] = u64::MAX;
            *((base + mailbox_bytes(ports) as usize) as *mut u32) = 0xffff_ffff; // any non-zero bit pattern
        }
        let mut server = Process::new(ports, base);
        let mut port = server.try_open(lanes, 0).expect("pending");
        assert_eq!(port.lane_mask, 0b11, "lanes cut to the port's lanes");
        assert!(matches!(port.recv_n(1024), Err(Stall::Corrupt(_))));
    }

    #[test]
    fn recv_n_takes_each_lane_s_own_length_in_one_port() {
        // A warp-cooperative client (LLVM's GPU libc): lanes 0 and 2 of one
        // port send 10 and 150 bytes in the same packets.
        let (ports, lanes) = (1u32, 4u32);
        let mem = vec![0u64; allocation_size(lanes, ports) as usize / 8];
        let base = mem.as_ptr() as usize;
        let data: [Vec<u8>; 2] = [(0..10u8).collect(), (0..150u8).map(|b| b ^ 0x5a).collect()];
        let sent = data.clone();
        let client = std::thread::spawn(move || {
            let mb = |which: usize| {
                // SAFETY: the mailboxes of port 0, aligned u32s inside the test's buffer, which outlives the thread.
                unsafe { AtomicU32::from_ptr((base + which * 4) as *mut u32) }
            };
            let slot = |lane: usize| (base + packet_offset(ports) as usize + lane * 64) as *mut u8;
            // SAFETY: the header of port 0, inside the buffer.
            unsafe { std::ptr::write_volatile((base + header_offset(ports) as usize) as *mut Header, Header { mask: 0b101, opcode: 3 }) };
            let mut out = 0u32;
            let mut packet = 0usize;
            loop {
                let mut any = false;
                for (k, lane) in [0usize, 2].into_iter().enumerate() {
                    let bytes = &sent[k];
                    let (from, room, at) = if packet == 0 { (0, 56, 8) } else { (56 + (packet - 1) * 64, 64, 0) };
                    if packet == 0 {
                        // SAFETY: the lane's slot, 8-aligned, inside the buffer.
                        unsafe { (slot(lane) as *mut u64).write_volatile(bytes.len() as u64) };
                    }
                    if from < bytes.len() || packet == 0 {
                        any = true;
                        let n = bytes.len().saturating_sub(from).min(room);
                        // SAFETY: at + n <= 64 bytes of the lane's slot.
                        unsafe { std::ptr::copy_nonoverlapping(bytes[from..from + n].as_ptr(), slot(lane).add(at), n) };
                    }
                }
                if !any {
                    break;
                }
                out ^= 1;
                mb(1).store(out, Ordering::Release); // our outbox (the server's inbox)
                while mb(0).load(Ordering::Acquire) != out {
                    std::hint::spin_loop(); // wait until the port is ours again
                }
                packet += 1;
            }
        });
        let mut server = Process::new(ports, base);
        let mut port = loop {
            if let Some(p) = server.try_open(lanes, 0) {
                break p;
            }
            std::hint::spin_loop();
        };
        assert_eq!((port.opcode(), port.lane_mask), (3, 0b101));
        let (got, too_big) = port.recv_n(1 << 20).unwrap();
        port.close();
        client.join().unwrap();
        assert!(too_big.is_none());
        assert_eq!(got[0], data[0]);
        assert_eq!(got[2], data[1]);
        assert!(got[1].is_empty() && got[3].is_empty());
        drop(mem);
    }
}
