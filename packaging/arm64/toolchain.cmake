# Cross-compiling imgmcp for linux-arm64 (scripts/package --arch arm64): Debian's
# crossbuild-essential-arm64 compilers against the sysroot packaging/arm64/sysroot makes (set
# IMGMCP_ARM64_SYSROOT to its root/). Programs run at build time (the man pages' `--help`) run
# under qemu-user with the sysroot's loader and libraries.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
if(NOT IMGMCP_ARM64_SYSROOT)
  set(IMGMCP_ARM64_SYSROOT $ENV{IMGMCP_ARM64_SYSROOT} CACHE PATH "The arm64 sysroot's root/")
endif()
if(NOT IS_DIRECTORY "${IMGMCP_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "IMGMCP_ARM64_SYSROOT must name the root/ that packaging/arm64/sysroot makes "
                      "(got '${IMGMCP_ARM64_SYSROOT}')")
endif()
# Seen by try_compile projects too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES IMGMCP_ARM64_SYSROOT)
set(CMAKE_SYSROOT ${IMGMCP_ARM64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH ${IMGMCP_ARM64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_DIR} "")
set(ENV{PKG_CONFIG_LIBDIR}
    "${IMGMCP_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${IMGMCP_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${IMGMCP_ARM64_SYSROOT})
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L ${IMGMCP_ARM64_SYSROOT})
