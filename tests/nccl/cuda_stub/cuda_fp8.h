/* Empty: nccl.h includes it; its types are not part of the layouts compared. */
#pragma once
