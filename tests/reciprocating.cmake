# The reciprocating lock: its explicit API beyond the stress harness (whose
# stress and TSan runs come from NL_LOCKS): the admission order, one wait
# element for several locks.
add_executable(test_reciprocating test_reciprocating.c)
target_link_libraries(test_reciprocating PRIVATE numalock_static)
target_compile_options(test_reciprocating PRIVATE ${NL_WARN})
foreach(part order shared)
  add_test(NAME reciprocating_api.${part} COMMAND test_reciprocating ${part})
  set_tests_properties(reciprocating_api.${part} PROPERTIES TIMEOUT 120 LABELS "unit;tsan")
endforeach()
