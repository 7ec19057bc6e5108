# Robustness (tests/robust/): signals at waiting threads, nested locks that
# share a bucket of the gate, cancellation in condition waits under the
# preload library, allocation failure, and the soak (make soak). Included
# from tests/CMakeLists.txt in the normal and the ThreadSanitizer build.
set(NL_RB_DIR ${CMAKE_CURRENT_LIST_DIR})

add_executable(nl_robust_signals ${NL_RB_DIR}/signals.c)
target_include_directories(nl_robust_signals PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(nl_robust_signals PRIVATE numalock_static Threads::Threads)
target_compile_options(nl_robust_signals PRIVATE ${NL_WARN})

# every lock: a signal storm whose handlers nest past the node pools, EINTR
# in parked waits, nested locks in one gate bucket with more threads than CPUs
if(NL_SANITIZE_THREAD)
  set(NL_RB_SECONDS 1)
  set(NL_RB_ENV "${NL_TSAN_ENV}")
else()
  set(NL_RB_SECONDS 2)
  set(NL_RB_ENV "")
endif()
foreach(lock ${NL_LOCKS})
  add_test(NAME robust.signals.${lock} COMMAND nl_robust_signals --lock ${lock} --mode storm --threads 6
    --seconds ${NL_RB_SECONDS} --rate 5000 --depth 12 --topology virtual:2)
  # parked waiters (they sleep at once), more threads than the gate's turns
  # spread over 8 virtual nodes: handlers that lock run while their thread is
  # inside a release (hemlock hung here 5 of 5 runs before its handlers' locks
  # took pool slots)
  add_test(NAME robust.signals_parked.${lock} COMMAND nl_robust_signals --lock ${lock} --mode storm --threads 11
    --seconds ${NL_RB_SECONDS} --rate 3600 --depth 7 --policy park:0:0 --topology virtual:2x2x2)
  add_test(NAME robust.eintr.${lock} COMMAND nl_robust_signals --lock ${lock} --mode eintr --threads 4
    --seconds ${NL_RB_SECONDS} --rate 2000)
  add_test(NAME robust.nest.${lock} COMMAND nl_robust_signals --lock ${lock} --mode nest --threads 8
    --seconds ${NL_RB_SECONDS})
  set_tests_properties(robust.signals.${lock} robust.signals_parked.${lock} robust.eintr.${lock} robust.nest.${lock} PROPERTIES
    TIMEOUT 120 LABELS "robust;tsan" ENVIRONMENT "${NL_RB_ENV}")
endforeach()

# allocation failure: malloc and its relatives replaced by failalloc.c (not
# under ThreadSanitizer, whose runtime allocates for itself)
if(NOT NL_SANITIZE_THREAD)
  add_executable(nl_robust_alloc ${NL_RB_DIR}/alloc.c ${NL_RB_DIR}/failalloc.c)
  target_link_libraries(nl_robust_alloc PRIVATE numalock_static Threads::Threads)
  target_compile_options(nl_robust_alloc PRIVATE ${NL_WARN} -fno-builtin-malloc)
  foreach(lock ${NL_LOCKS})
    foreach(mode create sweep cold deep)
      add_test(NAME robust.alloc.${mode}.${lock} COMMAND nl_robust_alloc --lock ${lock} --mode ${mode})
      set_tests_properties(robust.alloc.${mode}.${lock} PROPERTIES TIMEOUT 300 LABELS robust)
    endforeach()
  endforeach()
endif()

# cancellation in condition waits: glibc, and the preload library with each
# lock (those that cannot replace a mutex are skipped)
if(TARGET numalock_preload AND NOT CMAKE_CROSSCOMPILING)
  add_executable(nl_robust_cancel ${NL_RB_DIR}/cancel.c)
  target_link_libraries(nl_robust_cancel PRIVATE Threads::Threads)
  target_include_directories(nl_robust_cancel PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_compile_options(nl_robust_cancel PRIVATE ${NL_WARN} -O2)
  # allocation failure under the preload: the in-place locks work on, a
  # lock that needs a block stops with one line
  add_executable(nl_robust_alloc_preload ${NL_RB_DIR}/alloc_preload.c ${NL_RB_DIR}/failalloc.c)
  target_link_libraries(nl_robust_alloc_preload PRIVATE Threads::Threads)
  target_include_directories(nl_robust_alloc_preload PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_compile_options(nl_robust_alloc_preload PRIVATE ${NL_WARN} -O2 -fno-builtin-malloc)
  add_test(NAME robust.alloc_preload.glibc COMMAND nl_robust_alloc_preload)
  add_test(NAME robust.alloc_preload.external COMMAND $<TARGET_FILE:numalock_cli> run --lock ttas --
    $<TARGET_FILE:nl_robust_alloc_preload>)
  add_test(NAME robust.alloc_preload.rwlock COMMAND $<TARGET_FILE:numalock_cli> run --lock hbo --rwlock cst-rwsem
    -- $<TARGET_FILE:nl_robust_alloc_preload>)
  set_tests_properties(robust.alloc_preload.external PROPERTIES ENVIRONMENT NUMALOCK_PRELOAD_EXTERNAL=1
    PASS_REGULAR_EXPRESSION "outcome=stops \\(numalock preload: no memory for a ttas lock")
  set_tests_properties(robust.alloc_preload.rwlock PROPERTIES
    PASS_REGULAR_EXPRESSION "outcome=stops \\(numalock preload: no memory for a cst-rwsem lock")
  set_tests_properties(robust.alloc_preload.glibc robust.alloc_preload.external robust.alloc_preload.rwlock
    PROPERTIES TIMEOUT 120 LABELS robust)
  add_test(NAME robust.cancel.glibc COMMAND nl_robust_cancel)
  set_tests_properties(robust.cancel.glibc PROPERTIES TIMEOUT 120 LABELS robust)
  foreach(lock ${NL_LOCKS})
    add_test(NAME robust.cancel.${lock}
      COMMAND $<TARGET_FILE:numalock_cli> run --lock ${lock} --topology virtual:2 -- $<TARGET_FILE:nl_robust_cancel>)
    add_test(NAME robust.alloc_preload.${lock}
      COMMAND $<TARGET_FILE:numalock_cli> run --lock ${lock} -- $<TARGET_FILE:nl_robust_alloc_preload>)
    set_tests_properties(robust.cancel.${lock} robust.alloc_preload.${lock} PROPERTIES TIMEOUT 120 LABELS robust
      SKIP_REGULAR_EXPRESSION "cannot replace pthread mutexes")
    set_tests_properties(robust.alloc_preload.${lock} PROPERTIES PASS_REGULAR_EXPRESSION "outcome=works")
  endforeach()
endif()

# the soak (make soak MINUTES=N [SEED=S]; not a CTest test)
if(NOT NL_SANITIZE_THREAD)
  add_executable(nl_robust_soak ${NL_RB_DIR}/soak.c)
  target_link_libraries(nl_robust_soak PRIVATE numalock_static Threads::Threads)
  target_compile_options(nl_robust_soak PRIVATE ${NL_WARN})
endif()
