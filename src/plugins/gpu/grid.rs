//! Launch dimensions exactly as LLVM 22.1 computes them
//! (`GenericKernelTy::init`, `getNumThreads`, `getNumBlocks`; abi-reference
//! §7.2, §7.5). Pure arithmetic, no driver.

use super::kernel_env::{ExecMode, KernelEnvironment};

/// Per-device grid values (`GridValues` after device init).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridLimits {
    /// `CU_DEVICE_ATTRIBUTE_WARP_SIZE`.
    pub warp_size: u32,
    /// `GV_Max_WG_Size`: `MAX_BLOCK_DIM_X`, capped by `OMP_TEAMS_THREAD_LIMIT`.
    pub thread_limit: u32,
    /// `GV_Default_WG_Size` (128 for NVPTX).
    pub default_threads: u32,
    /// `GV_Max_Teams`: `MAX_GRID_DIM_X`, capped by `OMP_NUM_TEAMS`.
    pub block_limit: u32,
    /// `GV_Default_Num_Teams` (3200 for NVPTX).
    pub default_blocks: u32,
    /// `LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT` (32).
    pub min_threads_low_trip: u32,
    /// `LIBOMPTARGET_REUSE_BLOCKS_FOR_HIGH_TRIP_COUNT` (true).
    pub reuse_blocks_for_high_trip: bool,
}

/// `NVPTXGridValues` (OMPGridValues.h): default team size and count.
pub const NVPTX_DEFAULT_WG_SIZE: u32 = 128;
pub const NVPTX_DEFAULT_NUM_TEAMS: u32 = 3200;

impl GridLimits {
    /// The limits of a device with the given attributes and the
    /// `OMP_NUM_TEAMS` / `OMP_TEAMS_THREAD_LIMIT` caps (≤ 0: none).
    pub fn new(warp_size: u32, max_block_dim_x: u32, max_grid_dim_x: u32, omp_num_teams: i64, omp_teams_thread_limit: i64) -> Self {
        let cap = |v: u32, env: i64| if env > 0 { v.min(u32::try_from(env).unwrap_or(u32::MAX)) } else { v };
        GridLimits {
            warp_size,
            thread_limit: cap(max_block_dim_x, omp_teams_thread_limit),
            default_threads: NVPTX_DEFAULT_WG_SIZE,
            block_limit: cap(max_grid_dim_x, omp_num_teams),
            default_blocks: NVPTX_DEFAULT_NUM_TEAMS,
            min_threads_low_trip: 32,
            reuse_blocks_for_high_trip: true,
        }
    }
}

/// Per-kernel values fixed when the kernel is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelGrid {
    pub mode: ExecMode,
    /// `MaxNumThreads`.
    pub max_threads: u32,
    /// `PreferredNumThreads`.
    pub preferred_threads: u32,
}

impl KernelGrid {
    /// Reference (GenericKernelTy::init + CUDAKernelTy::initImpl). A kernel
    /// without an environment runs in bare mode.
    pub fn new(env: Option<&KernelEnvironment>, grid: &GridLimits, func_max_threads_per_block: Option<u32>) -> Self {
        let (mode, max_cfg, min_cfg) = match env {
            Some(e) => (e.exec_mode, e.max_threads, e.min_threads),
            None => (ExecMode::BARE, 0, 0),
        };
        let mut max_threads = if max_cfg > 0 { (max_cfg as u32).min(grid.thread_limit) } else { grid.thread_limit };
        if let Some(f) = func_max_threads_per_block.filter(|&f| f > 0) {
            max_threads = max_threads.min(f);
        }
        let preferred_threads = if min_cfg > 0 { (min_cfg as u32).max(grid.default_threads) } else { grid.default_threads };
        KernelGrid { mode, max_threads, preferred_threads }
    }
}

/// The blocks and threads of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub blocks: [u32; 3],
    pub threads: [u32; 3],
}

/// Computes the grid of a launch from the (already corrected) `NumTeams`
/// and `ThreadLimit` arrays and the loop trip count.
pub fn compute(k: &KernelGrid, grid: &GridLimits, teams: [u32; 3], thread_limit: [u32; 3], tripcount: u64) -> Launch {
    let mut threads = thread_limit;
    let mut blocks = teams;
    if k.mode != ExecMode::BARE {
        threads[0] = num_threads(k, grid, thread_limit[0]);
        blocks[0] = num_blocks(k, grid, teams[0], tripcount, &mut threads[0], thread_limit[0] > 0);
    }
    Launch { blocks, threads }
}

/// Reference (GenericKernelTy::getNumThreads).
fn num_threads(k: &KernelGrid, grid: &GridLimits, clause: u32) -> u32 {
    let mut tl = clause;
    if tl > 0 && k.mode == ExecMode::GENERIC {
        // Room for the main thread's warp; 22.1 wraps for 0xffffffff.
        tl = tl.wrapping_add(grid.warp_size);
    }
    k.max_threads.min(if tl > 0 { tl } else { k.preferred_threads })
}

/// Reference (GenericKernelTy::getNumBlocks).
fn num_blocks(k: &KernelGrid, grid: &GridLimits, clause: u32, trip: u64, threads: &mut u32, threads_from_user: bool) -> u32 {
    if clause > 0 {
        return clause.min(grid.block_limit);
    }
    if k.mode == ExecMode::SPMD_NO_LOOP {
        let t = u64::from((*threads).max(1));
        return if trip > 0 { u32::try_from((trip - 1) / t + 1).unwrap_or(u32::MAX) } else { 1 };
    }
    let default = u64::from(grid.default_blocks);
    let mut trip_blocks = u64::MAX;
    if trip > 0 {
        if k.mode == ExecMode::SPMD {
            let min_threads = grid.min_threads_low_trip.min(*threads);
            let t = u64::from(*threads);
            if trip >= default * t || threads_from_user {
                trip_blocks = (trip - 1) / t.max(1) + 1;
            } else if trip >= default * u64::from(min_threads) {
                let per_block = trip.div_ceil(default.max(1));
                let p2 = per_block.checked_next_power_of_two().unwrap_or(u64::MAX);
                *threads = (*threads).min(u32::try_from(p2).unwrap_or(u32::MAX));
                trip_blocks = (trip - 1) / u64::from((*threads).max(1)) + 1;
            } else {
                *threads = (*threads).min(min_threads);
                trip_blocks = (trip - 1) / u64::from((*threads).max(1)) + 1;
            }
        } else {
            // Generic and Generic-SPMD: one distribute iteration per team.
            trip_blocks = trip;
        }
    }
    // 22.1 truncates the 64-bit count to 32 bits here.
    let mut preferred = trip_blocks as u32;
    if grid.reuse_blocks_for_high_trip {
        preferred = trip_blocks.min(default) as u32;
    }
    preferred.min(grid.block_limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> GridLimits {
        GridLimits::new(32, 1024, i32::MAX as u32, 0, 0)
    }
    fn env(mode: u8, min_threads: i32, max_threads: i32) -> KernelEnvironment {
        KernelEnvironment {
            use_generic_state_machine: 0,
            may_use_nested_parallelism: 0,
            exec_mode: ExecMode(mode),
            min_threads,
            max_threads,
            min_teams: 0,
            max_teams: 0,
            reduction_data_size: 0,
            reduction_buffer_length: 0,
        }
    }
    fn run(mode: u8, max_threads: i32, teams: u32, threads: u32, trip: u64) -> ([u32; 3], [u32; 3]) {
        let g = h200();
        let k = KernelGrid::new(Some(&env(mode, 1, max_threads)), &g, Some(1024));
        let l = compute(&k, &g, [teams, 1, 1], [threads, 1, 1], trip);
        (l.blocks, l.threads)
    }

    #[test]
    fn bare_launches_exactly_what_was_asked() {
        let g = h200();
        let k = KernelGrid::new(None, &g, Some(1024));
        assert_eq!(k.mode, ExecMode::BARE);
        let l = compute(&k, &g, [3, 2, 2], [8, 4, 2], 12345);
        assert_eq!(l, Launch { blocks: [3, 2, 2], threads: [8, 4, 2] });
        let l = compute(&k, &g, [100000, 1, 1], [2048, 1, 1], 0);
        assert_eq!(l.blocks[0], 100000);
        assert_eq!(l.threads[0], 2048, "bare mode is not clamped");
    }

    #[test]
    fn generic_adds_a_warp_and_spmd_does_not() {
        assert_eq!(run(1, -1, 8, 64, 0), ([8, 1, 1], [96, 1, 1]));
        assert_eq!(run(2, -1, 8, 64, 0), ([8, 1, 1], [64, 1, 1]));
        assert_eq!(run(3, -1, 8, 64, 0), ([8, 1, 1], [64, 1, 1]), "Generic-SPMD: no extra warp");
        // MaxThreads from the kernel environment caps the thread count.
        assert_eq!(run(1, 128, 1, 1000, 0).1[0], 128);
    }

    #[test]
    fn defaults_without_clauses() {
        // `target` (no teams): NumTeams -1 became 1; no thread limit → preferred 128.
        assert_eq!(run(3, -1, 1, 0, 0), ([1, 1, 1], [128, 1, 1]));
        // `target teams` without trip count: default 3200 teams.
        assert_eq!(run(1, -1, 0, 0, 0), ([3200, 1, 1], [128, 1, 1]));
        // Generic with a distribute loop: one team per iteration, capped by the default.
        assert_eq!(run(1, -1, 0, 0, 100), ([100, 1, 1], [128, 1, 1]));
        assert_eq!(run(1, -1, 0, 0, 1_000_000), ([3200, 1, 1], [128, 1, 1]));
    }

    #[test]
    fn spmd_trip_count_heuristics() {
        // Plenty of iterations: one per thread, capped at the default team count.
        assert_eq!(run(2, 128, 0, 0, 10_000_000), ([3200, 1, 1], [128, 1, 1]));
        // Medium: fewer threads (power of two), keeping 3200 teams busy.
        let (b, t) = run(2, 128, 0, 0, 3200 * 40);
        assert_eq!(t[0], 64);
        assert_eq!(b[0], 2000);
        // Low: 32 threads per team.
        assert_eq!(run(2, 128, 0, 0, 1000), ([32, 1, 1], [32, 1, 1]));
        // A user thread limit is honoured.
        assert_eq!(run(2, 1024, 0, 256, 1000), ([4, 1, 1], [256, 1, 1]));
        // SPMD-No-Loop: one iteration per thread, no cap.
        assert_eq!(run(6, 128, 0, 0, 1_000_000), ([7813, 1, 1], [128, 1, 1]));
    }

    #[test]
    fn environment_caps() {
        let g = GridLimits::new(32, 1024, i32::MAX as u32, 16, 64);
        let k = KernelGrid::new(Some(&env(2, 1, -1)), &g, None);
        let l = compute(&k, &g, [100, 1, 1], [512, 1, 1], 0);
        assert_eq!(l, Launch { blocks: [16, 1, 1], threads: [64, 1, 1] });
        // The function's own limit caps MaxNumThreads.
        let k = KernelGrid::new(Some(&env(2, 1, -1)), &h200(), Some(256));
        assert_eq!(k.max_threads, 256);
        // Generic with thread_limit 0xffffffff wraps like 22.1 and ends at the preferred count.
        let k = KernelGrid::new(Some(&env(1, 1, -1)), &h200(), None);
        assert_eq!(compute(&k, &h200(), [1, 1, 1], [u32::MAX, 1, 1], 0).threads[0], 31);
    }
}
