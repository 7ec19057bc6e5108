# Topology by measurement: clustering of synthetic latency matrices,
# the stored measurement, `--topology measured`, one real measurement here.
add_executable(test_topo test_topo.c)
target_link_libraries(test_topo PRIVATE numalock_static m)
target_compile_options(test_topo PRIVATE ${NL_WARN})
foreach(part cpulist cluster store measured measure levels virtual)
  add_test(NAME topo.${part} COMMAND test_topo ${part})
  set_tests_properties(topo.${part} PROPERTIES TIMEOUT 120 LABELS unit)
endforeach()

if(NOT NL_SANITIZE_THREAD AND NOT CMAKE_CROSSCOMPILING) # scripts that run the command
  add_test(NAME topo.cli COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/topo_cli_test.sh $<TARGET_FILE:numalock_cli>)
  set_tests_properties(topo.cli PROPERTIES TIMEOUT 120 LABELS cli)
endif()

# the HP cache-line contention test, every lock at 1 and 2 threads
if(NOT NL_SANITIZE_THREAD AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME contention.cli COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/contention_test.sh $<TARGET_FILE:numalock_cli>)
  set_tests_properties(contention.cli PROPERTIES TIMEOUT 300 LABELS cli)
endif()
