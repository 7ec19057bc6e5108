# C and C++ users of the public headers:
#  - header_check: every header in include/numalock/ compiles alone as strict
#    C11 and as C++17 (a test, so a header in the making breaks no build);
#  - test_cxx links the library from C++: the struct layout matches C's, and
#    each lock type of numalock/numalock.hpp works with the std lock helpers.
# In the ThreadSanitizer build too: test_cxx's counters are races if a lock
# fails. The install test (tests/install.cmake) builds examples/ against an
# installed copy.
add_test(NAME header_check COMMAND ${CMAKE_CURRENT_LIST_DIR}/header_check.sh ${CMAKE_C_COMPILER}
  ${CMAKE_CXX_COMPILER} ${CMAKE_SOURCE_DIR}/include)
set_tests_properties(header_check PROPERTIES TIMEOUT 120 LABELS unit)
# and with Clang where it is installed (it refuses GCC's __atomic builtins
# on _Atomic objects, which GCC accepts)
find_program(NL_CLANG NAMES clang clang-15 clang-14)
find_program(NL_CLANGXX NAMES clang++ clang++-15 clang++-14)
if(NL_CLANG AND NL_CLANGXX AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME header_check.clang COMMAND ${CMAKE_CURRENT_LIST_DIR}/header_check.sh ${NL_CLANG}
    ${NL_CLANGXX} ${CMAKE_SOURCE_DIR}/include)
  set_tests_properties(header_check.clang PROPERTIES TIMEOUT 120 LABELS unit)
endif()

add_executable(test_cxx ${CMAKE_CURRENT_LIST_DIR}/cxx/test_cxx.cpp ${CMAKE_CURRENT_LIST_DIR}/cxx/layout.c)
target_link_libraries(test_cxx PRIVATE numalock)
set_target_properties(test_cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
target_compile_options(test_cxx PRIVATE -Wall -Wextra)
foreach(part layout sizes lockable shared handle)
  add_test(NAME cxx.${part} COMMAND test_cxx ${part})
  set_tests_properties(cxx.${part} PROPERTIES TIMEOUT 300 LABELS "unit;tsan")
endforeach()
# a "lock" that excludes nothing must fail the same checks
add_test(NAME cxx.selftest_broken COMMAND test_cxx broken)
set_tests_properties(cxx.selftest_broken PROPERTIES PASS_REGULAR_EXPRESSION "no-lock \\(must fail\\): "
  TIMEOUT 120 LABELS unit)
# a header with a C-only _Atomic field must fail header_check
add_test(NAME header_check_selftest_broken COMMAND ${CMAKE_CURRENT_LIST_DIR}/header_check.sh ${CMAKE_C_COMPILER}
  ${CMAKE_CXX_COMPILER} ${CMAKE_CURRENT_LIST_DIR}/cxx/broken_include)
set_tests_properties(header_check_selftest_broken PROPERTIES PASS_REGULAR_EXPRESSION "broken.h does not compile as C\\+\\+17"
  TIMEOUT 60 LABELS unit)
