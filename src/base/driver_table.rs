//! The one macro that turns a list of driver entry points into a function
//! table loaded with libloading (style guide §6). Used by the CUDA plugin
//! (libcuda) and the AMDGPU plugin (libhsa-runtime64).

/// Generates one function table from a single list of driver entry points.
///
/// `required fn name(args) -> ret;` becomes a plain `unsafe extern "C" fn`
/// field resolved at load (a missing symbol fails the load);
/// `optional fn ...;` becomes an `Option<...>` field. `plugin` names the
/// plugin in messages.
macro_rules! driver_table {
    (
        $(#[$meta:meta])*
        pub(crate) struct $table:ident, plugin = $plugin:literal, libs = [$($lib:literal),+ $(,)?] {
            $( $kind:ident fn $fname:ident ( $($arg:ident : $aty:ty),* $(,)? ) -> $ret:ty ; )*
        }
    ) => {
        $(#[$meta])*
        pub(crate) struct $table {
            /// Kept open for the life of the process: every pointer below points into it.
            _lib: libloading::Library,
            /// The file that was opened (for messages).
            pub path: String,
            $( pub $fname: driver_table!(@field $kind, unsafe extern "C" fn($($aty),*) -> $ret), )*
        }

        impl $table {
            /// Default file names, tried in order.
            pub const LIBS: &'static [&'static str] = &[$($lib),+];

            /// Every entry point of the list: (name, required).
            pub const SYMBOLS: &'static [(&'static str, bool)] =
                &[$( (stringify!($fname), driver_table!(@required $kind)) ),*];

            /// Opens `path` and resolves every listed symbol.
            fn open(path: &str) -> $crate::base::error::Result<Self> {
                // SAFETY: opening a GPU driver library runs its initialisers, which are designed to run in any process that links or dlopens it (they register no device state before init).
                let lib = unsafe { libloading::Library::new(path) }.map_err(|e| $crate::base::error::OffloadError::PluginUnavailable {
                    plugin: $plugin,
                    reason: format!("cannot open {path}: {e}"),
                })?;
                $crate::debug!("{}: opened {path}; resolving {} entry points", $plugin, Self::SYMBOLS.len());
                Ok($table {
                    $( $fname: driver_table!(@resolve $plugin, $kind, lib, path, $fname, unsafe extern "C" fn($($aty),*) -> $ret), )*
                    _lib: lib,
                    path: path.to_string(),
                })
            }
        }
    };
    (@field required, $fty:ty) => { $fty };
    (@field optional, $fty:ty) => { Option<$fty> };
    (@required required) => { true };
    (@required optional) => { false };
    (@resolve $plugin:literal, required, $lib:ident, $path:ident, $fname:ident, $fty:ty) => {{
        // SAFETY: the symbol has this C signature in every driver that exports it (cuda.h; hsa.h, hsa_ext_amd.h); the pointer is only used while `$lib` is open, which is for the rest of the process.
        match unsafe { $lib.get::<$fty>(concat!(stringify!($fname), "\0").as_bytes()) } {
            Ok(sym) => *sym,
            Err(_) => {
                return Err($crate::base::error::OffloadError::MissingSymbol { lib: $path.to_string(), symbol: stringify!($fname).into() });
            }
        }
    }};
    (@resolve $plugin:literal, optional, $lib:ident, $path:ident, $fname:ident, $fty:ty) => {{
        // SAFETY: as for required symbols.
        let sym = unsafe { $lib.get::<$fty>(concat!(stringify!($fname), "\0").as_bytes()) }.ok().map(|s| *s);
        if sym.is_none() {
            $crate::debug!("{}: optional symbol {} not in {}", $plugin, stringify!($fname), $path);
        }
        sym
    }};
}
