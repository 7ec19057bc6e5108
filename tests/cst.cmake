# CST locks: read-write mode of the stress harness, readers really
# share, writers are alone, cst-mutex specifics; lockref unit tests.
add_executable(test_cst ${CMAKE_CURRENT_LIST_DIR}/test_cst.c)
target_link_libraries(test_cst PRIVATE numalock_static)
target_compile_options(test_cst PRIVATE ${NL_WARN})

add_test(NAME cst.mutex COMMAND test_cst mutex)
add_test(NAME cst.revoke COMMAND test_cst revoke)
add_test(NAME cst.migrate COMMAND test_cst migrate)
set_tests_properties(cst.mutex cst.revoke PROPERTIES TIMEOUT 180 LABELS unit)
foreach(lock cst-rwsem pthread-rwlock)
  add_test(NAME cst.readers_share.${lock} COMMAND test_cst share ${lock})
  add_test(NAME cst.writer_alone.${lock} COMMAND test_cst writer ${lock})
  set_tests_properties(cst.readers_share.${lock} cst.writer_alone.${lock}
    PROPERTIES TIMEOUT 180 LABELS unit)
  foreach(pct 50 90)
    foreach(t 4 32)
      foreach(topo auto virtual:2)
        add_test(NAME stress_rw.${lock}.r${pct}.t${t}.${topo}
          COMMAND stress --lock ${lock} --threads ${t} --topology ${topo} --read-pct ${pct} --ops 60000)
        set_tests_properties(stress_rw.${lock}.r${pct}.t${t}.${topo} PROPERTIES TIMEOUT 180 LABELS stress)
      endforeach()
    endforeach()
  endforeach()
endforeach()

add_executable(test_lockref ${CMAKE_CURRENT_LIST_DIR}/test_lockref.c)
target_link_libraries(test_lockref PRIVATE numalock_static)
target_compile_options(test_lockref PRIVATE ${NL_WARN})
add_test(NAME lockref COMMAND test_lockref)
set_tests_properties(lockref PROPERTIES TIMEOUT 180 LABELS unit)
