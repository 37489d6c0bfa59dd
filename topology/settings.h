// The settings topology/ reads (base/config_table.h). docs/configuration.md documents them.
#pragma once

#include "base/config_table.h"

namespace dc::settings {

inline constexpr config::Setting kTopoFile{
    .name = "DEEPCOMM_TOPO_FILE", .doc = "A topology file (docs/topology-file.md) the cost model and tuning read."};
inline constexpr config::Setting kTopoXml{.name = "DEEPCOMM_TOPO_XML",
                                          .doc = "An hwloc XML export to detect instead of the live machine."};
inline constexpr config::Setting kSysfsRoot{
    .name = "DEEPCOMM_SYSFS_ROOT",
    .default_text = "/sys on the live machine, none for an XML export",
    .doc = "A directory standing for /sys when reading NIC link layer, speed and state."};

inline constexpr const config::Setting* kTopologyTable[] = {&kTopoFile, &kTopoXml, &kSysfsRoot};

}  // namespace dc::settings
