# CNA family (issue 3): cna, cna-opt, qspinlock, qspinlock-cna, c-bo-mcs,
# c-tkt-tkt, hmcs. Their stress/TSan runs come from NL_LOCKS in CMakeLists.txt;
# here: the explicit-API tests and the Spin model of CNA's hand-over.

# the stress harness with a lookup that also finds not-yet-registered locks
add_executable(stress_cna stress.c test_cna_find.c)
target_compile_definitions(stress_cna PRIVATE nl_lock_find=cna_test_find)
target_link_libraries(stress_cna PRIVATE numalock_static)
