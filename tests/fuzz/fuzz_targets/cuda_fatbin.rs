#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| omptarget_rs::fuzzing::cuda_fatbin(data));
