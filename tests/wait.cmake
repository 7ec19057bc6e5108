# The waiting design (src/wait/wait.h): early wake, gate, statistics
# without a trylock first. Runs in the TSan build too. A nudge that does not
# wake its waiter must hang into the watchdog (and fail for that reason).
add_executable(test_wait test_wait.c)
target_include_directories(test_wait PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(test_wait PRIVATE numalock_static)
target_compile_options(test_wait PRIVATE ${NL_WARN})
add_test(NAME wait COMMAND test_wait all)
set_tests_properties(wait PROPERTIES TIMEOUT 120 LABELS "unit;tsan")
add_test(NAME wait_broken_nudge COMMAND test_wait --broken-nudge)
set_tests_properties(wait_broken_nudge PROPERTIES PASS_REGULAR_EXPRESSION "FAIL: watchdog: a waiter never woke up"
  TIMEOUT 60 LABELS "unit;tsan")
