/* SPDX-License-Identifier: MIT */
/* Name lookups generated from the CUDA headers by gen-names.py; NULL for an unknown value. */
#ifndef GW_SIM_NAMES_H
#define GW_SIM_NAMES_H

const char *gw_sim_cuda_error_name(unsigned int v);
const char *gw_sim_runtime_cbid_name(unsigned int v);
const char *gw_sim_driver_cbid_name(unsigned int v);
const char *gw_sim_cupti_result_name(unsigned int v);

#endif
