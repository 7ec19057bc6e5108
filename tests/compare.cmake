# `numalock compare` (tests/compare_test.sh): a small comparison on the
# lock-bound program, bad input, a program failing under one lock, an
# interrupt, a compare line in a report suite, the installed command. It
# needs the preload library and runs host programs: not in the
# ThreadSanitizer or a cross build.
if(NL_SANITIZE_THREAD OR CMAKE_CROSSCOMPILING OR NOT TARGET numalock_preload)
  return()
endif()
add_test(NAME compare COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/compare_test.sh $<TARGET_FILE:numalock_cli>
  $<TARGET_FILE:nl_lockbound> ${CMAKE_BINARY_DIR})
set_tests_properties(compare PROPERTIES TIMEOUT 300 LABELS cli)
