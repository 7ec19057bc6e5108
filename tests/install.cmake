# `make install` as a user meets it: install into a temporary
# prefix, build examples/ against it with pkg-config and CMake, run the
# installed command from outside the checkout (tests/install_test.sh).
# Not in the ThreadSanitizer build (it has no preload library).
if(NL_SANITIZE_THREAD OR CMAKE_CROSSCOMPILING OR NOT TARGET numalock_preload)
  return()
endif()
add_test(NAME install COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/install_test.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(install PROPERTIES TIMEOUT 600 LABELS install SKIP_RETURN_CODE 77)
