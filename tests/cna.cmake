# CNA family: cna, cna-opt, qspinlock, qspinlock-cna, c-bo-mcs,
# c-tkt-tkt, hmcs. Their stress/TSan runs come from NL_LOCKS in CMakeLists.txt;
# here: the explicit-API tests and the Spin model of CNA's hand-over.

# the stress harness with a lookup that also finds not-yet-registered locks
add_executable(stress_cna stress.c test_cna_find.c)
target_compile_definitions(stress_cna PRIVATE nl_lock_find=cna_test_find)
target_link_libraries(stress_cna PRIVATE numalock_static)

# explicit APIs: qspinlock (public 4-byte API, fallback path, any-thread
# unlock), CNA paper form with stack nodes, fairness rule parsing, sizes
add_executable(test_cna test_cna.c)
target_link_libraries(test_cna PRIVATE numalock_static)
target_compile_options(test_cna PRIVATE ${NL_WARN})
foreach(topo auto virtual:2 virtual:4)
  add_test(NAME cna_api.${topo} COMMAND test_cna all --topology ${topo})
  set_tests_properties(cna_api.${topo} PROPERTIES TIMEOUT 300 LABELS unit)
endforeach()

# Spin model of CNA's hand-over (verify/cna.pml): must pass, and each
# deliberately broken variant must yield a counterexample. Skipped (77) when
# spin is not installed (scripts/deps.d/spin.sh installs it).
if(NOT CMAKE_CROSSCOMPILING) # the models do not depend on the target: the host build checks them
  add_test(NAME verify_cna COMMAND ${CMAKE_SOURCE_DIR}/verify/run.sh)
  add_test(NAME verify_cna_broken COMMAND ${CMAKE_SOURCE_DIR}/verify/run.sh --broken)
  set_tests_properties(verify_cna verify_cna_broken PROPERTIES TIMEOUT 300 LABELS verify SKIP_RETURN_CODE 77)
endif()

# Spin model of the qspinlock word protocol (verify/qspinlock.pml): safety and
# the pending waiter's liveness must hold, each broken variant must fail.
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME verify_qspinlock COMMAND ${CMAKE_SOURCE_DIR}/verify/run.sh qspinlock)
  add_test(NAME verify_qspinlock_broken COMMAND ${CMAKE_SOURCE_DIR}/verify/run.sh qspinlock --broken)
  set_tests_properties(verify_qspinlock verify_qspinlock_broken PROPERTIES TIMEOUT 300 LABELS verify SKIP_RETURN_CODE 77)
endif()
