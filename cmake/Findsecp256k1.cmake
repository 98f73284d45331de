# Findsecp256k1
# -------------
# libsecp256k1 (bitcoin-core) with the ECDSA public-key recovery module.
# Debian ships only a pkg-config file (libsecp256k1.pc), no CMake package.
#
# Imported target: secp256k1::secp256k1
# Result variables: secp256k1_FOUND, secp256k1_VERSION, secp256k1_INCLUDE_DIR, secp256k1_LIBRARY

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
    pkg_check_modules(PC_secp256k1 QUIET libsecp256k1)
endif()

find_path(secp256k1_INCLUDE_DIR
    NAMES secp256k1.h
    HINTS ${PC_secp256k1_INCLUDEDIR} ${PC_secp256k1_INCLUDE_DIRS})
find_library(secp256k1_LIBRARY
    NAMES secp256k1
    HINTS ${PC_secp256k1_LIBDIR} ${PC_secp256k1_LIBRARY_DIRS})

# Sender recovery needs secp256k1_ecdsa_recover(), which only exists when the library was built
# with --enable-module-recovery; its header is the visible sign of that.
set(secp256k1_HAS_RECOVERY FALSE)
if(secp256k1_INCLUDE_DIR AND EXISTS "${secp256k1_INCLUDE_DIR}/secp256k1_recovery.h")
    set(secp256k1_HAS_RECOVERY TRUE)
endif()

set(secp256k1_VERSION "${PC_secp256k1_VERSION}")

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(secp256k1
    REQUIRED_VARS secp256k1_LIBRARY secp256k1_INCLUDE_DIR secp256k1_HAS_RECOVERY
    VERSION_VAR secp256k1_VERSION
    REASON_FAILURE_MESSAGE "libsecp256k1 with the recovery module (secp256k1_recovery.h) is required (Debian: libsecp256k1-dev)")

if(secp256k1_FOUND AND NOT TARGET secp256k1::secp256k1)
    add_library(secp256k1::secp256k1 UNKNOWN IMPORTED)
    set_target_properties(secp256k1::secp256k1 PROPERTIES
        IMPORTED_LOCATION "${secp256k1_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${secp256k1_INCLUDE_DIR}")
endif()

mark_as_advanced(secp256k1_INCLUDE_DIR secp256k1_LIBRARY)
