# Every lock on a shared machine (src/wait/wait.h): bound to one CPU with 4
# threads, and beside one busy loop per CPU with 8 threads. The harness's
# watchdog fails a run in which no operation completes for 30 s; a lock whose
# waiters take the CPU from its holder (hundreds of operations per second
# instead of millions) runs past the test's timeout instead.
if(NL_SANITIZE_THREAD OR CMAKE_CROSSCOMPILING)
  return() # the sanitizer build runs the harness itself (tests/CMakeLists.txt);
           # a cross build's programs cannot be started by the script
endif()
foreach(lock ${NL_LOCKS})
  add_test(NAME shared.${lock}.cpu0.t4
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/shared_machine.sh cpu0
            $<TARGET_FILE:stress> --lock ${lock} --threads 4 --topology virtual:2 --ops 60000 --watchdog 30)
  add_test(NAME shared.${lock}.busy.t8
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/shared_machine.sh busy
            $<TARGET_FILE:stress> --lock ${lock} --threads 8 --topology virtual:2 --ops 60000 --watchdog 30)
  set_tests_properties(shared.${lock}.cpu0.t4 shared.${lock}.busy.t8 PROPERTIES TIMEOUT 120 LABELS shared
    RUN_SERIAL TRUE)
endforeach()
