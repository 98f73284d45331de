# Findcryptopp
# ------------
# Crypto++ (used for Keccak-256). Debian ships only a pkg-config file (libcrypto++.pc), no CMake
# package; headers are <cryptopp/...> (Debian also has a crypto++/ alias directory).
#
# Imported target: cryptopp::cryptopp
# Result variables: cryptopp_FOUND, cryptopp_VERSION, cryptopp_INCLUDE_DIR, cryptopp_LIBRARY

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
    pkg_check_modules(PC_cryptopp QUIET libcrypto++)
endif()

# The include dir is the parent of cryptopp/, so that sources write #include <cryptopp/keccak.h>.
find_path(cryptopp_INCLUDE_DIR
    NAMES cryptopp/keccak.h
    HINTS ${PC_cryptopp_INCLUDEDIR} ${PC_cryptopp_INCLUDE_DIRS})
find_library(cryptopp_LIBRARY
    NAMES cryptopp crypto++
    HINTS ${PC_cryptopp_LIBDIR} ${PC_cryptopp_LIBRARY_DIRS})

set(cryptopp_VERSION "${PC_cryptopp_VERSION}")

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(cryptopp
    REQUIRED_VARS cryptopp_LIBRARY cryptopp_INCLUDE_DIR
    VERSION_VAR cryptopp_VERSION
    REASON_FAILURE_MESSAGE "Crypto++ with <cryptopp/keccak.h> is required (Debian: libcrypto++-dev)")

if(cryptopp_FOUND AND NOT TARGET cryptopp::cryptopp)
    add_library(cryptopp::cryptopp UNKNOWN IMPORTED)
    set_target_properties(cryptopp::cryptopp PROPERTIES
        IMPORTED_LOCATION "${cryptopp_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${cryptopp_INCLUDE_DIR}")
endif()

mark_as_advanced(cryptopp_INCLUDE_DIR cryptopp_LIBRARY)
