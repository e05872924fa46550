//! AMDGPU code-object inspection on real code objects: ELF checks,
//! processor and target-id decoding, compatibility decisions against agent
//! ISAs, `.kd` kernel discovery, globals, the `amdhsa` msgpack metadata
//! (kernarg segment size and alignment, hidden-argument layout, wavefront
//! size) and kernel environments. No HSA runtime is involved; the tests also
//! check that nothing here opens one.
//!
//! The images come from `c-tests/gpu-images.sh` (target/gpu-images, or
//! `$GPU_IMAGES_DIR`; gfx90a/gfx942 code object v6) plus
//! `c-tests/amdgpu-images.sh` (code object v5, pinned target-id features,
//! kernels with OpenMP environments), which the tests run when needed.
//! Without the images every test prints `skipped: gpu-images not built`.

use omptarget_rs::base::image::parse_offload_binary;
use omptarget_rs::plugins::Plugin;
use omptarget_rs::plugins::amdgpu::image::{self, Feature, TargetId};
use omptarget_rs::plugins::amdgpu::kernargs::{self, Geometry};
use omptarget_rs::plugins::amdgpu::{AmdgpuPlugin, hsa};
use omptarget_rs::plugins::gpu::kernel_env::ExecMode;
use std::path::{Path, PathBuf};
use std::sync::Once;

fn images() -> Option<PathBuf> {
    let dir = std::env::var_os("GPU_IMAGES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/gpu-images"));
    if !dir.join("kernels/kernels.gfx90a.hsaco").exists() {
        println!("skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in {})", dir.display());
        return None;
    }
    static EXTRA: Once = Once::new();
    EXTRA.call_once(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/amdgpu-images.sh");
        let out = std::process::Command::new("bash").arg(script).arg(&dir).output().expect("run c-tests/amdgpu-images.sh");
        assert!(
            out.status.success(),
            "c-tests/amdgpu-images.sh failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    });
    Some(dir)
}

fn read(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The extra code objects need clang-22; `None` (with a line) without them.
fn extra(dir: &Path, rel: &str) -> Option<Vec<u8>> {
    let p = dir.join("amdgpu").join(rel);
    if p.exists() {
        Some(std::fs::read(p).unwrap())
    } else {
        println!("skipped: amdgpu/{rel} not built (needs clang-22)");
        None
    }
}

const KERNELS: [&str; 5] = ["saxpy", "launch_dims", "read_global", "write_global", "many_args"];

#[test]
fn processor_and_target_id_decoding() {
    let Some(d) = images() else { return };
    for (file, processor, version, flags) in [
        ("kernels/kernels.gfx90a.hsaco", "gfx90a", 6, 0x53f),
        ("kernels/kernels.gfx90a.nodyn.hsaco", "gfx90a", 6, 0x53f),
        ("kernels/kernels.gfx942.hsaco", "gfx942", 6, 0x54c),
        ("kernels/kernels.gfx942.nodyn.hsaco", "gfx942", 6, 0x54c),
    ] {
        let b = read(&d, file);
        assert_eq!(u32::from_le_bytes(b[48..52].try_into().unwrap()), flags, "{file}: e_flags");
        let img = image::identify(&b).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((img.processor, img.code_object_version), (processor, version), "{file}");
        assert_eq!((img.xnack, img.sramecc), (Feature::Any, Feature::Any), "{file}: clang's default is 'any'");
        assert_eq!(img.target_id(), processor);
    }
    if let Some(b) = extra(&d, "kernels.gfx90a.cov5.hsaco") {
        assert_eq!(b[8], 3, "EI_ABIVERSION of code object v5");
        assert_eq!(image::identify(&b).unwrap().code_object_version, 5);
    }
    if let Some(b) = extra(&d, "kernels.gfx90a.xnack_off.hsaco") {
        let img = image::identify(&b).unwrap();
        assert_eq!((img.xnack, img.sramecc), (Feature::Off, Feature::Any));
        assert_eq!(img.target_id(), "gfx90a:xnack-");
    }
    if let Some(b) = extra(&d, "kernels.gfx942.sramecc_on.xnack_on.hsaco") {
        assert_eq!(image::identify(&b).unwrap().target_id(), "gfx942:sramecc+:xnack+");
    }
    // Other targets' images are not AMDGPU images; neither is a v4 code object.
    for file in ["kernels/kernels.x86_64.so", "kernels/kernels.sm_90.cubin", "kernels/kernels.emu.so"] {
        assert!(image::identify(&read(&d, file)).is_err(), "{file}");
    }
    let mut v4 = read(&d, "kernels/kernels.gfx90a.hsaco");
    v4[8] = 2;
    assert!(image::identify(&v4).unwrap_err().to_string().contains("invalid AMD ABI version, must be version 5 or above"));
}

#[test]
fn compatibility_decisions() {
    let Some(d) = images() else { return };
    let isa = |s: &str| TargetId::parse(&format!("amdgcn-amd-amdhsa--{s}")).unwrap();
    let a90 = image::identify(&read(&d, "kernels/kernels.gfx90a.hsaco")).unwrap();
    let a942 = image::identify(&read(&d, "kernels/kernels.gfx942.hsaco")).unwrap();
    // MI210/MI250 report gfx90a:sramecc+:xnack- (or xnack+ with HSA_XNACK=1); MI300 gfx942.
    for agent in ["gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack+", "gfx90a:sramecc-:xnack-", "gfx90a"] {
        assert!(image::is_compatible(&a90, &isa(agent)), "gfx90a 'any' image on {agent}");
        assert!(!image::is_compatible(&a942, &isa(agent)), "gfx942 image on {agent}");
    }
    assert!(image::is_compatible(&a942, &isa("gfx942:sramecc+:xnack-")));
    assert!(!image::is_compatible(&a90, &isa("gfx942:sramecc+:xnack-")));
    if let Some(b) = extra(&d, "kernels.gfx90a.xnack_off.hsaco") {
        let img = image::identify(&b).unwrap();
        assert!(image::is_compatible(&img, &isa("gfx90a:sramecc+:xnack-")));
        assert!(!image::is_compatible(&img, &isa("gfx90a:sramecc+:xnack+")));
        assert!(!image::is_compatible(&img, &isa("gfx90a")), "xnack- needs the sign in the target id");
        let m = image::incompatibility_message(&img, &[vec![isa("gfx90a:sramecc+:xnack+")], vec![isa("gfx942:sramecc+:xnack-")]]);
        assert_eq!(
            m,
            "AMDGPU image for gfx90a:xnack- (gfx90a:xnack- code object v6) is not compatible with any AMDGPU device: \
             device 0 is gfx90a:sramecc+:xnack+, device 1 is gfx942:sramecc+:xnack-"
        );
    }
    if let Some(b) = extra(&d, "kernels.gfx942.sramecc_on.xnack_on.hsaco") {
        let img = image::identify(&b).unwrap();
        assert!(!image::is_compatible(&img, &isa("gfx942:sramecc+:xnack-")));
        assert!(image::is_compatible(&img, &isa("gfx942:sramecc+:xnack+")));
    }
    // The plugin says yes to every AMDGPU code object and no to the rest,
    // by byte inspection only.
    let plugin = AmdgpuPlugin::default();
    assert!(plugin.is_compatible(&read(&d, "kernels/kernels.gfx90a.hsaco")));
    assert!(plugin.is_compatible(&read(&d, "kernels/kernels.gfx942.nodyn.hsaco")));
    assert!(!plugin.is_compatible(&read(&d, "kernels/kernels.x86_64.so")));
    assert!(!plugin.is_compatible(&read(&d, "kernels/kernels.sm_90.cubin")));
    assert!(!hsa::touched(), "is_compatible must not open libhsa");
}

#[test]
fn kd_discovery_and_globals() {
    let Some(d) = images() else { return };
    for file in ["kernels/kernels.gfx90a.hsaco", "kernels/kernels.gfx942.nodyn.hsaco"] {
        let s = image::symbols(&read(&d, file)).unwrap();
        let mut kernels = s.kernels.clone();
        kernels.sort();
        let mut want = KERNELS.to_vec();
        want.sort();
        assert_eq!(kernels, want, "{file}: one .kd descriptor per kernel");
        assert_eq!(s.global_size("g_value"), Some(4), "{file}");
        assert_eq!(s.global_size("g_table"), Some(16), "{file}");
        assert_eq!(s.global_size("saxpy.kd"), None, "descriptors are not globals");
    }
}

#[test]
fn kernel_metadata_and_hidden_arguments() {
    let Some(d) = images() else { return };
    let md = image::metadata(&read(&d, "kernels/kernels.gfx90a.hsaco")).unwrap();
    assert_eq!(md.target, "amdgcn-amd-amdhsa--gfx90a");
    assert_eq!(md.version, vec![1, 2]);
    assert_eq!(md.kernels.len(), 5);
    // Values of reports/amdgpu.gfx90a.txt (llvm-readelf --notes).
    for (name, explicit, segment, first_hidden) in [
        ("saxpy", 40, 296, 40),
        ("launch_dims", 24, 280, 24),
        ("read_global", 24, 280, 24),
        ("write_global", 16, 272, 16),
        ("many_args", 136, 392, 136),
    ] {
        let k = md.kernel(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(k.symbol, format!("{name}.kd"));
        assert_eq!((k.explicit_size(), k.kernarg_segment_size, k.kernarg_segment_align), (explicit, segment, 8), "{name}");
        assert_eq!((k.wavefront_size, k.max_flat_workgroup_size), (64, 1024), "{name}");
        assert!(!k.uses_dynamic_stack && k.private_segment_fixed_size == 0 && k.group_segment_fixed_size == 0, "{name}");
        let hidden = k.hidden_args();
        assert_eq!(hidden[0].offset, first_hidden, "{name}: hidden args start at alignTo(explicit, 8)");
        let at = |kind: &str| hidden.iter().find(|a| a.value_kind == kind).map(|a| (a.offset - first_hidden, a.size));
        // The metadata agrees with LLVM's AMDGPUImplicitArgsTy (abi-reference §5.5).
        assert_eq!(at("hidden_block_count_x"), Some((0, 4)), "{name}");
        assert_eq!(at("hidden_block_count_z"), Some((8, 4)), "{name}");
        assert_eq!(at("hidden_group_size_x"), Some((12, 2)), "{name}");
        assert_eq!(at("hidden_group_size_z"), Some((16, 2)), "{name}");
        assert_eq!(at("hidden_grid_dims"), Some((64, 2)), "{name}");
        // Every explicit argument is one 8-byte slot.
        assert!(k.args.iter().filter(|a| !a.is_hidden()).enumerate().all(|(i, a)| a.offset == 8 * i as u32 && a.size == 8), "{name}");
    }
    assert_eq!(md.kernel("many_args").unwrap().sgpr_count, 56);

    // The kernarg segment built from the metadata equals LLVM's fixed layout.
    let k = md.kernel("launch_dims").unwrap();
    let g = Geometry { blocks: [3, 2, 2], threads: [8, 4, 2], dynamic_lds: 0 };
    let args = [u64::MAX, 0x1234_0000, 12 * 96];
    let with_meta = kernargs::build("launch_dims", 280, Some(k), &args, &g).unwrap();
    let fixed = kernargs::build("launch_dims", 280, None, &args, &g).unwrap();
    assert_eq!(with_meta, fixed);
    assert_eq!(u32::from_le_bytes(with_meta[24..28].try_into().unwrap()), 3);
    assert_eq!(u16::from_le_bytes(with_meta[24 + 64..24 + 66].try_into().unwrap()), 3, "grid dims");

    // v5 code objects and the gfx942 images carry the same layout.
    for (rel, b) in [
        ("kernels/kernels.gfx942.hsaco", Some(read(&d, "kernels/kernels.gfx942.hsaco"))),
        ("amdgpu/kernels.gfx90a.cov5.hsaco", extra(&d, "kernels.gfx90a.cov5.hsaco")),
    ] {
        let Some(b) = b else { continue };
        let md = image::metadata(&b).unwrap();
        let s = md.kernel("saxpy").unwrap();
        assert_eq!((s.explicit_size(), s.kernarg_segment_size, s.hidden_args()[0].offset), (40, 296, 40), "{rel}");
    }
    // The nodyn kernels have one slot less.
    let md = image::metadata(&read(&d, "kernels/kernels.gfx90a.nodyn.hsaco")).unwrap();
    assert_eq!(md.kernel("saxpy").unwrap().explicit_size(), 32);
}

#[test]
fn kernel_environments() {
    let Some(d) = images() else { return };
    assert!(image::kernel_environments(&read(&d, "kernels/kernels.gfx90a.hsaco")).unwrap().is_empty(), "gpu-images kernels are bare");
    let Some(b) = extra(&d, "env_kernels.gfx90a.hsaco") else { return };
    let envs = image::kernel_environments(&b).unwrap();
    assert_eq!(envs.len(), 2);
    let g = envs["k_generic"];
    assert_eq!((g.exec_mode, g.max_threads, g.min_teams, g.use_generic_state_machine), (ExecMode::GENERIC, 256, -1, 1));
    let r = envs["k_spmd_red"];
    assert_eq!((r.exec_mode, r.reduction_data_size, r.reduction_buffer_length), (ExecMode::SPMD, 8, 1024));
    assert!(r.needs_launch_environment());
    let s = image::symbols(&b).unwrap();
    assert_eq!(s.global_size("__omp_rtl_device_environment"), Some(48));
    assert!(s.kernels.contains(&"k_read_env".to_string()));
}

#[test]
fn offload_binary_containers() {
    let Some(d) = images() else { return };
    for arch in ["gfx90a", "gfx942"] {
        let b = read(&d, &format!("offload/{arch}.offbin"));
        let ob = parse_offload_binary(&b).unwrap().expect("an OffloadBinary");
        assert_eq!((ob.triple.as_str(), ob.arch.as_str()), ("amdgcn-amd-amdhsa", arch));
        let inner = &b[ob.image.clone()];
        assert_eq!(image::identify(inner).unwrap().processor, arch);
        assert_eq!(inner, read(&d, &format!("kernels/kernels.{arch}.hsaco")).as_slice());
    }
}

#[test]
fn garbage_code_objects_never_panic() {
    let Some(d) = images() else { return };
    let b = read(&d, "kernels/kernels.gfx90a.hsaco");
    // Truncations at every 97th byte and bit flips in the headers and the note.
    for n in (0..b.len()).step_by(97) {
        let _ = image::identify(&b[..n]);
        let _ = image::symbols(&b[..n]);
        let _ = image::metadata(&b[..n]);
        let _ = image::kernel_environments(&b[..n]);
    }
    let note = b.windows(7).position(|w| w == b"AMDGPU\0").unwrap_or(0);
    for i in (0..512 * 8).chain(note * 8..(note + 600).min(b.len()) * 8) {
        let mut c = b.clone();
        c[i / 8] ^= 1 << (i % 8);
        let _ = image::symbols(&c);
        let _ = image::metadata(&c);
        let _ = image::kernel_environments(&c);
    }
}
