# SPDX-License-Identifier: Apache-2.0
# BPF programs: bpf/*.bpf.c compiled with clang into objects, then turned into
# libbpf skeleton headers in the build tree (never committed).
find_program(CLANG_BPF NAMES clang-14 clang REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin REQUIRED)

# Sources whose hooks also attach without the BPF LSM: built a second time with
# -DCERB_FMOD_RET into <name>_fmod_ret, whose programs are fmod_ret (and fentry)
# programs on the kernel's security_ functions (bpf/policy_common.bpf.h).
set(CERBERUS_BPF_FMOD_RET_SOURCES cerberus_policy)

function(cerberus_bpf_skeletons target)
  file(GLOB bpf_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bpf/*.bpf.c)
  file(GLOB bpf_headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bpf/*.h)
  set(skel_dir ${CMAKE_BINARY_DIR}/bpf-skel)
  file(MAKE_DIRECTORY ${skel_dir})
  set(skeletons)
  foreach(src ${bpf_sources})
    get_filename_component(source_name ${src} NAME_WE)
    set(variants ${source_name})
    if(source_name IN_LIST CERBERUS_BPF_FMOD_RET_SOURCES)
      list(APPEND variants ${source_name}_fmod_ret)
    endif()
    foreach(name ${variants})
      set(defines)
      if(name MATCHES "_fmod_ret$")
        set(defines -DCERB_FMOD_RET)
      endif()
      set(obj ${skel_dir}/${name}.bpf.o)
      set(skel ${skel_dir}/${name}.skel.h)
      add_custom_command(
        OUTPUT ${skel}
        COMMAND ${CLANG_BPF} -g -O2 -target bpf -D__TARGET_ARCH_x86 ${defines}
                -I${CMAKE_SOURCE_DIR}/bpf -c ${src} -o ${obj}
        COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}
        DEPENDS ${src} ${bpf_headers}
        COMMENT "BPF skeleton ${name}")
      list(APPEND skeletons ${skel})
    endforeach()
  endforeach()
  if(skeletons)
    add_custom_target(${target}_bpf DEPENDS ${skeletons})
    add_dependencies(${target} ${target}_bpf)
  endif()
  target_include_directories(${target} PUBLIC ${skel_dir})
endfunction()
