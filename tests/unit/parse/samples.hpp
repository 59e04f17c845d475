// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernel text as real hosts print it (6.1 / 6.18 x86_64), shared by the parser
// tests. The same files live under tests/fixtures/proc/normal for the fs
// tests and seed the fuzz corpora.

#include <string_view>

namespace memqos::test::samples {

// A 64 GiB KVM host with one swap partition and one swap file.
inline constexpr std::string_view kMeminfo = R"(MemTotal:       65856896 kB
MemFree:         1843212 kB
MemAvailable:   23519640 kB
Buffers:          412508 kB
Cached:         20587320 kB
SwapCached:        61440 kB
Active:         31873020 kB
Inactive:       28740188 kB
Active(anon):   22804484 kB
Inactive(anon):  17011012 kB
Active(file):    9068536 kB
Inactive(file): 11729176 kB
Unevictable:       14864 kB
Mlocked:           13956 kB
SwapTotal:      12582908 kB
SwapFree:       10485756 kB
Zswap:                 0 kB
Zswapped:              0 kB
Dirty:              1352 kB
Writeback:             0 kB
AnonPages:      39540112 kB
Mapped:           612296 kB
Shmem:            214856 kB
KReclaimable:    1221004 kB
Slab:            1847096 kB
SReclaimable:    1121004 kB
SUnreclaim:       626092 kB
KernelStack:       21528 kB
PageTables:       101728 kB
SecPageTables:      4096 kB
NFS_Unstable:          0 kB
Bounce:                0 kB
WritebackTmp:          0 kB
CommitLimit:    45511356 kB
Committed_AS:   71672180 kB
VmallocTotal:   34359738367 kB
VmallocUsed:      214300 kB
VmallocChunk:          0 kB
Percpu:            28688 kB
HardwareCorrupted:     0 kB
AnonHugePages:  30720000 kB
ShmemHugePages:        0 kB
ShmemPmdMapped:        0 kB
FileHugePages:         0 kB
FilePmdMapped:         0 kB
CmaTotal:              0 kB
CmaFree:               0 kB
Unaccepted:            0 kB
Balloon:               0 kB
HugePages_Total:       0
HugePages_Free:        0
HugePages_Rsvd:        0
HugePages_Surp:        0
Hugepagesize:       2048 kB
Hugetlb:               0 kB
DirectMap4k:      530720 kB
DirectMap2M:    17066432 kB
DirectMap1G:    51380224 kB
)";

inline constexpr std::string_view kPressure =
    "some avg10=1.53 avg60=0.87 avg300=0.21 total=58761459\n"
    "full avg10=0.80 avg60=0.35 avg300=0.09 total=27635011\n";

// Excerpt: the first counters, then the reclaim block.
inline constexpr std::string_view kVmstat = R"(nr_free_pages 460803
nr_free_pages_blocks 300544
nr_zone_inactive_anon 4252753
nr_zone_active_anon 5701121
nr_zone_inactive_file 2932294
nr_zone_active_file 2267134
nr_zone_unevictable 3716
nr_zone_write_pending 338
nr_mlock 3489
nr_dirty_threshold 1214757
nr_dirty_background_threshold 606637
pgpgin 1177901
pgpgout 1237592
pswpin 53817
pswpout 611402
pgalloc_dma 0
pgalloc_dma32 1021455
pgalloc_normal 2634253
pgfault 4775879
pgmajfault 903
pgrefill 88120
pgreuse 2755722
pgsteal_kswapd 7120334
pgsteal_direct 20117
pgsteal_khugepaged 0
pgsteal_proactive 0
pgscan_kswapd 9441208
pgscan_direct 31507
pgscan_khugepaged 0
pgscan_proactive 0
pgscan_direct_throttle 0
pgscan_anon 1320004
pgscan_file 8152711
pgsteal_anon 611402
pgsteal_file 6529049
slabs_scanned 293
kswapd_inodesteal 0
pageoutrun 122
pgrotated 657
drop_pagecache 1
drop_slab 2
oom_kill 3
numa_pte_updates 0
thp_fault_alloc 0
swap_ra 4411
swap_ra_hit 3017
nr_unstable 0
)";

// Node 0 with DMA, DMA32, Normal and Movable (per-node stats printed under
// its first zone, pagesets with "high:" lines), node 1 with Normal only.
inline constexpr std::string_view kZoneinfo = R"(Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 4909
      nr_active_anon 384
      nr_inactive_file 48858
      nr_active_file 37266
      nr_unevictable 3716
      nr_slab_reclaimable 30251
      nr_slab_unreclaimable 6523
      workingset_refault_anon 0
      workingset_refault_file 19370
      nr_anon_pages 6803
      nr_mapped    5349
      nr_file_pages 88343
      nr_dirty     88
      nr_writeback 0
      nr_shmem     2214
      nr_kernel_stack 1528
      nr_page_table_pages 532
      nr_swapcached 0
  pages free     3840
        boost    0
        min      47
        low      58
        high     69
        promo    80
        spanned  4095
        present  3998
        managed  3840
        cma      0
        protection: (0, 3019, 5323, 5323, 5323)
      nr_free_pages 3840
      nr_zone_inactive_anon 0
      nr_zone_active_anon 0
      numa_hit     0
      numa_local   0
      numa_other   0
  pagesets
    cpu: 0
              count:    0
              high:     0
              batch:    1
              high_min: 29
              high_max: 240
  vm stats threshold: 4
    cpu: 1
              count:    0
              high:     0
              batch:    1
              high_min: 29
              high_max: 240
  vm stats threshold: 4
  node_unreclaimable:  0
  start_pfn:           1
Node 0, zone    DMA32
  pages free     772917
        boost    0
        min      9556
        low      11945
        high     14334
        promo    16723
        spanned  1044480
        present  782336
        managed  772917
        cma      0
        protection: (0, 0, 2304, 2304, 2304)
      nr_free_pages 772917
      nr_zone_inactive_anon 0
  pagesets
    cpu: 0
              count:    0
              high:     252
              batch:    63
  vm stats threshold: 24
  node_unreclaimable:  0
  start_pfn:           4096
Node 0, zone   Normal
  pages free     445237
        boost    0
        min      7292
        low      9115
        high     10938
        promo    12761
        spanned  5505024
        present  5505024
        managed  589824
        cma      0
        protection: (0, 0, 0, 0, 0)
      nr_free_pages 437211
      nr_zone_inactive_anon 8509
  pagesets
    cpu: 0
              count:    2250
              high:     5943
              batch:    63
  vm stats threshold: 24
  node_unreclaimable:  0
  start_pfn:           1048576
Node 0, zone  Movable
  pages free     0
        boost    0
        min      32
        low      32
        high     32
        promo    32
        spanned  0
        present  0
        managed  0
        cma      0
        protection: (0, 0, 0, 0, 0)
Node 1, zone   Normal
  per-node stats
      nr_inactive_anon 1909
      nr_active_anon 84
  pages free     1048001
        boost    0
        min      16893
        low      21116
        high     25339
        promo    29562
        spanned  8388608
        present  8388608
        managed  8256789
        cma      0
        protection: (0, 0, 0, 0, 0)
      nr_free_pages 1048001
  pagesets
    cpu: 0
              count:    12
              high:     5943
              batch:    63
  vm stats threshold: 32
  node_unreclaimable:  0
  start_pfn:           6553600
)";

// One partition and one swap file whose name has a space (escaped by the
// kernel as \040).
inline constexpr std::string_view kSwaps =
    "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
    "/dev/nvme0n1p3                          partition\t8388604\t\t1048576\t\t-2\n"
    "/var/lib/swap\\040files/swap0            file\t\t4194304\t\t1048576\t\t10\n";

inline constexpr std::string_view kMemoryStat = R"(anon 1073741824
file 536870912
kernel 16777216
kernel_stack 327680
pagetables 2097152
sec_pagetables 0
percpu 1234
sock 0
vmalloc 0
shmem 4096
zswap 0
zswapped 0
file_mapped 8192
file_dirty 12288
file_writeback 0
swapcached 0
anon_thp 0
file_thp 0
shmem_thp 0
inactive_anon 805306368
active_anon 268435456
inactive_file 402653184
active_file 134217728
unevictable 0
slab_reclaimable 1048576
slab_unreclaimable 524288
slab 1572864
workingset_refault_anon 17
workingset_refault_file 4096
workingset_activate_anon 0
workingset_activate_file 100
workingset_restore_anon 0
workingset_restore_file 0
workingset_nodereclaim 0
pgscan 5000
pgsteal 4200
pgscan_kswapd 4000
pgscan_direct 1000
pgscan_khugepaged 0
pgsteal_kswapd 3500
pgsteal_direct 700
pgsteal_khugepaged 0
pgfault 1000000
pgmajfault 321
pgrefill 0
pgactivate 0
pgdeactivate 0
pglazyfree 0
pglazyfreed 0
thp_fault_alloc 0
thp_collapse_alloc 0
)";

} // namespace memqos::test::samples
