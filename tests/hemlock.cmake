# Hemlock's API beyond the stress harness (whose stress and TSan runs come
# from NL_LOCKS): two waiters of two locks on one holder's element, with
# waiters that spin and that sleep at once (both asleep on one word); the
# paper form with one element per thread for three locks, under contention.
add_executable(test_hemlock test_hemlock.c)
target_link_libraries(test_hemlock PRIVATE numalock_static)
target_compile_options(test_hemlock PRIVATE ${NL_WARN})
add_test(NAME hemlock_api.multi COMMAND test_hemlock multi)
add_test(NAME hemlock_api.multi.park COMMAND test_hemlock multi)
set_tests_properties(hemlock_api.multi.park PROPERTIES ENVIRONMENT "NUMALOCK_WAIT=park:0:0")
add_test(NAME hemlock_api.shared COMMAND test_hemlock shared)
add_test(NAME hemlock_api.shared.park COMMAND test_hemlock shared)
set_tests_properties(hemlock_api.shared.park PROPERTIES ENVIRONMENT "NUMALOCK_WAIT=park:10:1")
set_tests_properties(hemlock_api.multi hemlock_api.multi.park hemlock_api.shared hemlock_api.shared.park
  PROPERTIES TIMEOUT 300 LABELS "unit;tsan")
