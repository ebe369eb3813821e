// Kernel headers are compiled several times, once per ISA with different -m flags. Everything
// they define lives in an inline namespace named after that ISA, so the copies never merge at
// link time (an AVX2-compiled inline function silently replacing the generic one would crash
// older CPUs). The build sets STRATA_KERNEL_ISA per kernel file; other files get `portable`.
#pragma once

#ifndef STRATA_KERNEL_ISA
#define STRATA_KERNEL_ISA portable
#endif

#define STRATA_TILE_NS_BEGIN namespace strata::tile { inline namespace STRATA_KERNEL_ISA {
#define STRATA_TILE_NS_END } }
