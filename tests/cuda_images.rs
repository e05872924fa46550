//! CUDA image inspection on real cubins and PTX: ELF header
//! generations, architecture decoding, compatibility decisions, symbol
//! discovery and kernel-environment parsing. No driver is involved; the
//! tests also check that nothing here opens one.
//!
//! The images come from `c-tests/gpu-images.sh` (target/gpu-images, or
//! `$GPU_IMAGES_DIR`); without them every test prints
//! `skipped: gpu-images not built`.

use omptarget_rs::base::image::parse_offload_binary;
use omptarget_rs::plugins::Plugin;
use omptarget_rs::plugins::cuda::image::{self, ArchVariant, ComputeCapability, CubinAbi, CudaImageKind, ExecMode, KernelEnvironment};
use omptarget_rs::plugins::cuda::{CudaPlugin, driver};
use std::path::PathBuf;

fn images() -> Option<PathBuf> {
    let dir = std::env::var_os("GPU_IMAGES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/gpu-images"));
    if dir.join("kernels/kernels.sm_90.cubin").exists() && dir.join("extra/ctors.sm_90.cubin").exists() {
        Some(dir)
    } else {
        println!("skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in {})", dir.display());
        None
    }
}

fn read(dir: &std::path::Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const KERNELS: [&str; 5] = ["saxpy", "launch_dims", "read_global", "write_global", "many_args"];

#[test]
fn header_generations_and_arch() {
    let Some(d) = images() else { return };
    for (file, abi, abi_version) in [
        ("kernels/kernels.sm_90.cubin", CubinAbi::V2, 8u8),
        ("kernels/kernels.sm_90.nodyn.cubin", CubinAbi::V2, 8),
        ("kernels/kernels.sm_90.cuda12.cubin", CubinAbi::V1, 7),
        ("extra/env_kernels.sm_90.cubin", CubinAbi::V2, 8),
        ("extra/env_kernels.sm_90.cuda12.cubin", CubinAbi::V1, 7),
    ] {
        let b = read(&d, file);
        assert_eq!(b[8], abi_version, "{file}: EI_ABIVERSION");
        let img = image::identify(&b).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(img.kind, CudaImageKind::Cubin(abi), "{file}");
        assert_eq!(img.arch.sm, 90, "{file}");
        assert_eq!(img.arch.to_string(), "sm_90");
        let flags = u32::from_le_bytes(b[48..52].try_into().unwrap());
        let (a, sm) = image::decode_cubin(abi_version, flags).unwrap();
        assert_eq!((a, sm), (abi, 90), "{file}: e_flags {flags:#x}");
    }
    for file in ["kernels/kernels.sm_90.ptx", "extra/env_kernels.sm_90.ptx"] {
        let img = image::identify(&read(&d, file)).unwrap();
        assert_eq!(img.kind, CudaImageKind::Ptx, "{file}");
        assert_eq!((img.arch.sm, img.arch.variant), (90, ArchVariant::Plain));
    }
    // Other targets' images are not CUDA images.
    for file in ["kernels/kernels.x86_64.so", "kernels/kernels.gfx90a.hsaco", "kernels/kernels.emu.so"] {
        assert!(image::identify(&read(&d, file)).is_err(), "{file}");
    }
}

#[test]
fn compatibility_decisions() {
    let Some(d) = images() else { return };
    let cc = |major, minor| ComputeCapability { major, minor };
    let v2 = image::identify(&read(&d, "kernels/kernels.sm_90.cubin")).unwrap();
    let v1 = image::identify(&read(&d, "kernels/kernels.sm_90.cuda12.cubin")).unwrap();
    let ptx = image::identify(&read(&d, "kernels/kernels.sm_90.ptx")).unwrap();
    for cubin in [v1, v2] {
        assert!(image::is_compatible(&cubin, cc(9, 0)), "H100/H200");
        assert!(!image::is_compatible(&cubin, cc(8, 0)), "A100");
        assert!(!image::is_compatible(&cubin, cc(8, 9)), "L40");
        assert!(!image::is_compatible(&cubin, cc(10, 0)), "B200: other major");
    }
    assert!(image::is_compatible(&ptx, cc(9, 0)));
    assert!(image::is_compatible(&ptx, cc(10, 0)), "PTX is JIT-compiled for newer devices");
    assert!(!image::is_compatible(&ptx, cc(8, 9)));
    let msg = image::incompatibility_message(&v2, &[cc(8, 0), cc(8, 6)]);
    assert!(msg.contains("sm_90") && msg.contains("device 0 is sm_80") && msg.contains("device 1 is sm_86"), "{msg}");
}

#[test]
fn symbol_discovery() {
    let Some(d) = images() else { return };
    for file in ["kernels/kernels.sm_90.cubin", "kernels/kernels.sm_90.cuda12.cubin", "kernels/kernels.sm_90.ptx"] {
        let s = image::symbols(&read(&d, file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut kernels = s.kernels.clone();
        kernels.sort();
        let mut want: Vec<String> = KERNELS.iter().map(|k| k.to_string()).collect();
        want.sort();
        assert_eq!(kernels, want, "{file}");
        assert_eq!(s.global_size("g_value"), Some(4), "{file}");
        assert_eq!(s.global_size("g_table"), Some(16), "{file}");
    }
    let s = image::symbols(&read(&d, "extra/env_kernels.sm_90.cubin")).unwrap();
    assert_eq!(s.kernels.len(), 4);
    assert_eq!(s.global_size("__omp_rtl_device_environment"), Some(48));
    assert_eq!(s.global_size("k_spmd_red_kernel_environment"), Some(48));
    for file in ["extra/ctors.sm_90.cubin", "extra/ctors.sm_90.cuda12.cubin", "extra/ctors.sm_90.ptx"] {
        let s = image::symbols(&read(&d, file)).unwrap();
        assert!(s.kernels.contains(&"nvptx$device$init".to_string()), "{file}: {:?}", s.kernels);
        for g in ["__init_array_start", "__init_array_end", "__init_array_object_first_abc123_101"] {
            assert_eq!(s.global_size(g), Some(8), "{file}: {g}");
        }
    }
}

#[test]
fn kernel_environment_parsing() {
    let Some(d) = images() else { return };
    // The test kernels have none: every one of them runs in bare mode.
    assert!(image::kernel_environments(&read(&d, "kernels/kernels.sm_90.cubin")).unwrap().is_empty());
    for file in ["extra/env_kernels.sm_90.cubin", "extra/env_kernels.sm_90.cuda12.cubin"] {
        let envs = image::kernel_environments(&read(&d, file)).unwrap();
        assert_eq!(envs.len(), 3, "{file}: {envs:?}");
        assert!(!envs.contains_key("k_bare"));
        let g: &KernelEnvironment = &envs["k_generic"];
        assert_eq!((g.use_generic_state_machine, g.may_use_nested_parallelism, g.exec_mode), (1, 1, ExecMode::GENERIC));
        assert_eq!((g.min_threads, g.max_threads, g.min_teams, g.max_teams), (1, -1, -1, -1));
        assert!(!g.needs_launch_environment());
        let r = &envs["k_spmd_red"];
        assert_eq!(r.exec_mode, ExecMode::SPMD);
        assert_eq!((r.max_threads, r.reduction_data_size, r.reduction_buffer_length), (128, 8, 1024));
        assert!(r.needs_launch_environment());
        let gs = &envs["k_generic_spmd"];
        assert_eq!((gs.exec_mode, gs.max_threads), (ExecMode::GENERIC_SPMD, 128));
    }
    // PTX environments are read from the device after JIT, not from the text.
    assert!(image::kernel_environments(&read(&d, "extra/env_kernels.sm_90.ptx")).unwrap().is_empty());
}

#[test]
fn plugin_compatibility_is_pure_inspection() {
    let Some(d) = images() else { return };
    let plugin = CudaPlugin::default();
    let offbin = read(&d, "offload/sm_90.offbin");
    let container = parse_offload_binary(&offbin).unwrap().expect("an OffloadBinary");
    assert_eq!((container.triple.as_str(), container.arch.as_str()), ("nvptx64-nvidia-cuda", "sm_90"));
    let inner = &offbin[container.image.clone()];
    assert!(plugin.is_compatible(inner), "the unwrapped cubin");
    assert!(!plugin.is_compatible(&offbin), "the runtime unwraps containers, the plugin sees raw images");
    for (file, want) in [
        ("kernels/kernels.sm_90.cubin", true),
        ("kernels/kernels.sm_90.cuda12.cubin", true),
        ("kernels/kernels.sm_90.ptx", true),
        ("kernels/kernels.x86_64.so", false),
        ("kernels/kernels.gfx90a.hsaco", false),
        ("kernels/kernels.gfx942.hsaco", false),
    ] {
        assert_eq!(plugin.is_compatible(&read(&d, file)), want, "{file}");
    }
    assert!(!driver::touched(), "is_compatible must not open libcuda");
}

#[test]
fn truncated_and_corrupted_real_images() {
    let Some(d) = images() else { return };
    let b = read(&d, "extra/env_kernels.sm_90.cubin");
    for n in (0..b.len()).step_by(97) {
        let _ = image::identify(&b[..n]);
        let _ = image::symbols(&b[..n]);
        let _ = image::kernel_environments(&b[..n]);
    }
    let mut seed = 12345u64;
    for _ in 0..2000 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut c = b.clone();
        let i = (seed >> 33) as usize % c.len();
        c[i] ^= 1 << ((seed >> 29) & 7);
        let _ = image::symbols(&c);
        let _ = image::kernel_environments(&c);
    }
}

/// A fatbin around real cubins and PTX, built in memory with the
/// layout `fatbinary` writes: the entry for the device is chosen, and the
/// chosen cubin's kernel environments read as from the cubin itself, also
/// from a buffer at an odd address.
#[test]
fn fatbin_choice_keeps_kernel_environments() {
    use omptarget_rs::plugins::cuda::fatbin;
    let Some(d) = images() else { return };
    let env = read(&d, "extra/env_kernels.sm_90.cubin");
    let ptx = read(&d, "extra/env_kernels.sm_90.ptx");
    let entry = |kind: u16, sm: u32, payload: &[u8]| {
        let padded = payload.len().next_multiple_of(8);
        let mut h = vec![0u8; 64];
        h[0..2].copy_from_slice(&kind.to_le_bytes());
        h[2..4].copy_from_slice(&0x101u16.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        h[28..32].copy_from_slice(&sm.to_le_bytes());
        h[40..48].copy_from_slice(&0x11u64.to_le_bytes());
        h.extend_from_slice(payload);
        h.resize(64 + padded, 0);
        h
    };
    let mut body = entry(2, 90, &env);
    body.extend(entry(1, 90, &ptx));
    let mut fb = vec![0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0];
    fb.extend_from_slice(&(body.len() as u64).to_le_bytes());
    fb.extend(body);
    let want = image::kernel_environments(&env).unwrap();
    assert!(!want.is_empty(), "env_kernels has kernel environments");
    // At an 8-aligned place and at an odd one.
    let mut odd = vec![0u8; fb.len() + 1];
    odd[1..].copy_from_slice(&fb);
    for bytes in [&fb[..], &odd[1..]] {
        let (img, data) = fatbin::select(bytes, ComputeCapability { major: 9, minor: 0 }).unwrap();
        assert_eq!(img.kind, CudaImageKind::Cubin(CubinAbi::V2));
        assert_eq!(image::kernel_environments(&data).unwrap(), want);
        // A newer major: the PTX, for the driver's JIT.
        let (img, data) = fatbin::select(bytes, ComputeCapability { major: 10, minor: 0 }).unwrap();
        assert_eq!(img.kind, CudaImageKind::Ptx);
        assert!(!image::symbols(&data).unwrap().kernels.is_empty());
        let err = fatbin::select(bytes, ComputeCapability { major: 8, minor: 9 }).unwrap_err().to_string();
        assert!(err.contains("cubins for sm_90; PTX for sm_90"), "{err}");
    }
    assert!(CudaPlugin::default().is_compatible(&fb), "the plugin takes the fatbin");
}
