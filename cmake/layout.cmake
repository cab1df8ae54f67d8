# SPDX-License-Identifier: Apache-2.0
# The identity of the BPF side (cerberus_layout.h in the build's bpf-skel
# directory, beside the skeletons): the first 12 hex digits of a hash over every
# file in bpf/, name and contents. The runtime pins under
# /sys/fs/bpf/cerberus/<it> (kernel/pinned_maps.hpp), so builds whose programs
# or maps differ never share pins. CMake reconfigures when any of them changes.
file(GLOB layout_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bpf/*.h ${CMAKE_SOURCE_DIR}/bpf/*.bpf.c)
list(SORT layout_files)
set(layout_text "")
foreach(file ${layout_files})
  get_filename_component(file_name ${file} NAME)
  file(SHA256 ${file} file_hash)
  string(APPEND layout_text "${file_name} ${file_hash}\n")
endforeach()
string(SHA256 layout_hash "${layout_text}")
string(SUBSTRING ${layout_hash} 0 12 CERB_LAYOUT_ID)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${layout_files})
configure_file(${CMAKE_SOURCE_DIR}/cmake/cerberus_layout.h.in ${CMAKE_BINARY_DIR}/bpf-skel/cerberus_layout.h @ONLY)
