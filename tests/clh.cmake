# The CLH lock's API beyond the stress harness (whose stress and TSan runs
# come from NL_LOCKS): a release by another thread than the holder, nodes
# passing between threads without a node allocated per round, trylock.
add_executable(test_clh test_clh.c)
target_link_libraries(test_clh PRIVATE numalock_static)
target_compile_options(test_clh PRIVATE ${NL_WARN})
foreach(part cross balance try)
  add_test(NAME clh_api.${part} COMMAND test_clh ${part})
  set_tests_properties(clh_api.${part} PROPERTIES TIMEOUT 300 LABELS "unit;tsan")
endforeach()
