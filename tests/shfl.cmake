# ShflLock: shfl and shfl-block. Their stress, TSan and
# interposition runs come from NL_LOCKS in CMakeLists.txt; here: the explicit
# API, the shuffle pass on hand-built queues, the shuffle statistics, and the
# Spin model of the shuffle + hand-over (verify/shfl.pml).
add_executable(test_shfl ${CMAKE_CURRENT_LIST_DIR}/test_shfl.c)
target_include_directories(test_shfl PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(test_shfl PRIVATE numalock_static Threads::Threads)
target_compile_options(test_shfl PRIVATE ${NL_WARN})
foreach(t api shuffle stats)
  add_test(NAME shfl.${t} COMMAND test_shfl ${t})
  set_tests_properties(shfl.${t} PROPERTIES TIMEOUT 300 LABELS unit)
endforeach()
# the shuffle check must be able to fail: a wrong expected order
add_test(NAME shfl.broken COMMAND test_shfl broken)
set_tests_properties(shfl.broken PROPERTIES PASS_REGULAR_EXPRESSION "shuffle broken \\(expects FIFO order\\)"
  TIMEOUT 60 LABELS unit)

if(NOT NL_SANITIZE_THREAD AND NOT CMAKE_CROSSCOMPILING)
  # Spin model of the lock word, the queue, the shuffle and the hand-over:
  # must pass; each deliberately broken variant must yield a counterexample
  add_test(NAME verify_shfl COMMAND ${CMAKE_SOURCE_DIR}/verify/run.sh shfl)
  add_test(NAME verify_shfl_broken COMMAND ${CMAKE_SOURCE_DIR}/verify/run.sh shfl --broken)
  set_tests_properties(verify_shfl verify_shfl_broken PROPERTIES TIMEOUT 300 LABELS verify SKIP_RETURN_CODE 77)
endif()
