# Interposition tests (issue 5): libnumalock-preload.so under real programs and
# glibc-semantics checks, for every registered lock (locks that cannot replace
# a pthread mutex report "skipped"). Not in the ThreadSanitizer build.
if(TARGET numalock_preload)
  set(NL_IP_DIR ${CMAKE_CURRENT_SOURCE_DIR}/interpose)
  add_executable(nl_semantics ${NL_IP_DIR}/semantics.c)
  add_executable(nl_cross_unlock ${NL_IP_DIR}/cross_unlock.c)
  add_executable(nl_lockbound ${NL_IP_DIR}/lockbound.c)
  add_executable(nl_cxx_timed ${NL_IP_DIR}/cxx_timed.cpp)
  add_executable(nl_c11_threads ${NL_IP_DIR}/c11_threads.c)
  set_target_properties(nl_cxx_timed PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  foreach(t nl_semantics nl_cross_unlock nl_lockbound nl_cxx_timed nl_c11_threads)
    target_link_libraries(${t} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
    target_compile_options(${t} PRIVATE -O2)
  endforeach()
  set(NL_IP_BIN ${CMAKE_BINARY_DIR}/bin)
  set(NL_IP_DEPS numalock_preload nl_semantics nl_cross_unlock nl_lockbound nl_cxx_timed nl_c11_threads)

  add_test(NAME interpose.symbols COMMAND ${NL_IP_DIR}/check_symbols.sh $<TARGET_FILE:numalock_preload>)
  add_test(NAME interpose.run_cli COMMAND ${NL_IP_DIR}/run_cli.sh $<TARGET_FILE:numalock_cli> ${NL_IP_BIN})
  add_test(NAME interpose.semantics.glibc COMMAND nl_semantics)
  # locks too large for the mutex live in a block it points to: force that path with a small lock
  add_test(NAME interpose.semantics.out_of_place
    COMMAND $<TARGET_FILE:numalock_cli> run --lock ttas -- $<TARGET_FILE:nl_semantics> --expect-preload)
  set_tests_properties(interpose.semantics.out_of_place PROPERTIES ENVIRONMENT NUMALOCK_PRELOAD_EXTERNAL=1)
  set_tests_properties(interpose.symbols interpose.run_cli interpose.semantics.glibc interpose.semantics.out_of_place PROPERTIES
    TIMEOUT 120 LABELS interpose)
  foreach(lock ${NL_LOCKS})
    add_test(NAME interpose.semantics.${lock}
      COMMAND $<TARGET_FILE:numalock_cli> run --lock ${lock} --topology virtual:2 -- $<TARGET_FILE:nl_semantics> --expect-preload)
    add_test(NAME interpose.programs.${lock}
      COMMAND ${NL_IP_DIR}/run_programs.sh $<TARGET_FILE:numalock_cli> ${lock} ${NL_IP_BIN})
    set_tests_properties(interpose.semantics.${lock} interpose.programs.${lock} PROPERTIES
      TIMEOUT 600 LABELS interpose SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "cannot replace pthread mutexes")
    # pthread rwlocks on a registered read-write algorithm (NUMALOCK_RWLOCK)
    add_test(NAME interpose.rwlock.${lock}
      COMMAND $<TARGET_FILE:numalock_cli> run --lock hbo --rwlock ${lock} --topology virtual:2 -- $<TARGET_FILE:nl_semantics> --expect-preload)
    set_tests_properties(interpose.rwlock.${lock} PROPERTIES
      TIMEOUT 240 LABELS interpose SKIP_REGULAR_EXPRESSION "unknown rwlock algorithm")
  endforeach()
endif()
