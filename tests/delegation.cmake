# Delegation locks: sanl, fc. Their plain stress/TSan runs come from
# NL_LOCKS in CMakeLists.txt; here: the stress harness through nl_lock_execute,
# the delegation harness on the explicit API, its broken variant (a server
# that drops pending requests when it downgrades: must fail), the Spin model.
add_executable(test_delegation test_delegation.c)
target_link_libraries(test_delegation PRIVATE numalock_static)
target_compile_options(test_delegation PRIVATE ${NL_WARN})

# the algorithm compiled into the test with the deliberate bug
add_executable(test_delegation_broken test_delegation.c)
target_compile_definitions(test_delegation_broken PRIVATE NL_SANL_BROKEN_DROP)
target_include_directories(test_delegation_broken PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(test_delegation_broken PRIVATE numalock_static)

if(NL_SANITIZE_THREAD)
  set(NL_DELEG_LABEL tsan)
  set(NL_DELEG_THREADS 2 8)
  set(NL_DELEG_TOPOS auto virtual:2)
else()
  set(NL_DELEG_LABEL unit)
  set(NL_DELEG_THREADS 1 2 4 8 32)
  set(NL_DELEG_TOPOS auto virtual:2 virtual:4)
endif()

foreach(lock sanl fc mcs)
  foreach(t ${NL_DELEG_THREADS})
    foreach(topo ${NL_DELEG_TOPOS})
      add_test(NAME deleg.stress_execute.${lock}.t${t}.${topo}
        COMMAND stress --lock ${lock} --threads ${t} --topology ${topo} --ops 40000 --execute --watchdog 60)
      set_tests_properties(deleg.stress_execute.${lock}.t${t}.${topo} PROPERTIES TIMEOUT 300
        LABELS "${NL_DELEG_LABEL};stress"
        ENVIRONMENT "${NL_TSAN_ENV}")
    endforeach()
  endforeach()
endforeach()

foreach(t ${NL_DELEG_THREADS})
  foreach(topo ${NL_DELEG_TOPOS})
    add_test(NAME deleg.harness.t${t}.${topo} COMMAND test_delegation all --threads ${t} --topology ${topo})
    set_tests_properties(deleg.harness.t${t}.${topo} PROPERTIES TIMEOUT 300 LABELS ${NL_DELEG_LABEL}
      ENVIRONMENT "${NL_TSAN_ENV}")
  endforeach()
endforeach()

# the harness must catch a server that drops requests when it downgrades
# (a server and its clients running at once: not in the emulated aarch64
# run, whose processes have one CPU)
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME deleg.harness_broken COMMAND test_delegation_broken once --threads 8)
  set_tests_properties(deleg.harness_broken PROPERTIES PASS_REGULAR_EXPRESSION "requests never ran"
    TIMEOUT 300 LABELS ${NL_DELEG_LABEL})
endif()

if(NOT NL_SANITIZE_THREAD AND NOT CMAKE_CROSSCOMPILING)
  # Spin model of the mode switch and the server hand-over (verify/sanl.pml)
  add_test(NAME verify_sanl COMMAND ${CMAKE_SOURCE_DIR}/verify/run.sh sanl)
  add_test(NAME verify_sanl_broken COMMAND ${CMAKE_SOURCE_DIR}/verify/run.sh sanl --broken)
  set_tests_properties(verify_sanl verify_sanl_broken PROPERTIES TIMEOUT 300 LABELS verify SKIP_RETURN_CODE 77)
endif()
