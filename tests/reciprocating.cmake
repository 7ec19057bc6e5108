# The reciprocating locks (reciprocating, reciprocating-numa): their explicit
# APIs beyond the stress harness (whose stress and TSan runs come from
# NL_LOCKS): the admission order, one wait element for several locks, the
# NUMA-aware variant's order and its bounded stay. And the C++ types of the
# one-word queue locks and CLH (numalock.hpp) under the std lock helpers.
add_executable(test_reciprocating test_reciprocating.c)
target_link_libraries(test_reciprocating PRIVATE numalock_static)
target_compile_options(test_reciprocating PRIVATE ${NL_WARN})
foreach(part order shared numa bound)
  add_test(NAME reciprocating_api.${part} COMMAND test_reciprocating ${part})
  set_tests_properties(reciprocating_api.${part} PROPERTIES TIMEOUT 300 LABELS "unit;tsan")
endforeach()

add_executable(test_reciprocating_cxx test_reciprocating_cxx.cpp)
target_link_libraries(test_reciprocating_cxx PRIVATE numalock)
set_target_properties(test_reciprocating_cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
target_compile_options(test_reciprocating_cxx PRIVATE -Wall -Wextra)
add_test(NAME reciprocating_cxx COMMAND test_reciprocating_cxx)
set_tests_properties(reciprocating_cxx PROPERTIES TIMEOUT 300 LABELS "unit;tsan")
