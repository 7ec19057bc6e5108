# Interposition tests: libnumalock-preload.so under real
# programs and glibc-semantics checks, for every registered lock (locks that
# cannot replace a pthread mutex report "skipped"; a new lock is covered by
# being in NL_LOCKS). Not in the ThreadSanitizer build, but for the preload's
# read-write lock, futex-rwlock, which runs the harness's rw mode in both.
foreach(pct 50 90)
  foreach(t 4 32)
    add_test(NAME stress_rw.futex-rwlock.r${pct}.t${t}
      COMMAND stress --lock futex-rwlock --threads ${t} --topology virtual:2 --read-pct ${pct} --ops 60000)
    set_tests_properties(stress_rw.futex-rwlock.r${pct}.t${t} PROPERTIES TIMEOUT 180 LABELS "stress;tsan"
      ENVIRONMENT "${NL_TSAN_ENV}")
  endforeach()
endforeach()

if(TARGET numalock_preload)
  set(NL_IP_DIR ${CMAKE_CURRENT_SOURCE_DIR}/interpose)
  add_executable(nl_semantics ${NL_IP_DIR}/semantics.c)
  add_executable(nl_cross_unlock ${NL_IP_DIR}/cross_unlock.c)
  add_executable(nl_lockbound ${NL_IP_DIR}/lockbound.c)
  add_executable(nl_cxx_timed ${NL_IP_DIR}/cxx_timed.cpp)
  add_executable(nl_c11_threads ${NL_IP_DIR}/c11_threads.c)
  add_executable(nl_spin ${NL_IP_DIR}/spin.c)
  add_executable(nl_small_stack ${NL_IP_DIR}/small_stack.c)
  set_target_properties(nl_cxx_timed PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  foreach(t nl_semantics nl_cross_unlock nl_lockbound nl_cxx_timed nl_c11_threads nl_spin nl_small_stack)
    target_link_libraries(${t} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
    target_compile_options(${t} PRIVATE -O2)
  endforeach()
  # the lock profile's test program: -g whatever the build type (the test
  # looks for its source lines), -rdynamic so that dladdr names its functions
  # too where the preload library was built without libdw
  add_executable(nl_profiled ${NL_IP_DIR}/profiled.c)
  target_link_libraries(nl_profiled PRIVATE Threads::Threads)
  target_compile_options(nl_profiled PRIVATE -g -O1)
  set_target_properties(nl_profiled PROPERTIES ENABLE_EXPORTS ON)
  set(NL_IP_BIN ${CMAKE_BINARY_DIR}/bin)
  set(NL_IP_DEPS numalock_preload nl_semantics nl_cross_unlock nl_lockbound nl_cxx_timed nl_c11_threads nl_spin
    nl_profiled nl_small_stack)

  if(CMAKE_CROSSCOMPILING)
    # Under qemu-user (make test-arm; no binfmt_misc here, so `numalock run`
    # cannot exec a program of the target): the test programs run under the
    # emulator, the preload library and its settings in the emulated
    # process's environment (QEMU_SET_ENV); the real Debian programs and the
    # scripts run in the host build only.
    # 17,000 threads' starts (the preload's thread slots recycled) take half
    # a minute under the emulator: under qspinlock-cna only
    add_test(NAME interpose.semantics.glibc COMMAND nl_semantics)
    foreach(lock pthread tas ttas ticket hbo qspinlock qspinlock-cna shfl shfl-block futex-rwlock)
      set(recycle ",NL_SEMANTICS_NO_RECYCLING=1")
      if(lock STREQUAL "qspinlock-cna")
        set(recycle "")
      endif()
      add_test(NAME interpose.semantics.${lock} COMMAND nl_semantics --expect-preload)
      set_tests_properties(interpose.semantics.${lock} PROPERTIES TIMEOUT 600 LABELS interpose ENVIRONMENT
        "QEMU_SET_ENV=LD_PRELOAD=$<TARGET_FILE:numalock_preload>,NUMALOCK_LOCK=${lock},NUMALOCK_TOPOLOGY=virtual:2,NL_SEMANTICS_UNDER_QEMU=1${recycle}")
    endforeach()
    add_test(NAME interpose.rwlock.cst-rwsem COMMAND nl_semantics --expect-preload)
    set_tests_properties(interpose.rwlock.cst-rwsem PROPERTIES TIMEOUT 600 LABELS interpose ENVIRONMENT
      "QEMU_SET_ENV=LD_PRELOAD=$<TARGET_FILE:numalock_preload>,NUMALOCK_LOCK=hbo,NUMALOCK_RWLOCK=cst-rwsem,NUMALOCK_TOPOLOGY=virtual:2,NL_SEMANTICS_UNDER_QEMU=1,NL_SEMANTICS_NO_RECYCLING=1")
    foreach(prog nl_cross_unlock nl_c11_threads nl_cxx_timed)
      add_test(NAME interpose.${prog}.qspinlock-cna COMMAND ${prog})
      set_tests_properties(interpose.${prog}.qspinlock-cna PROPERTIES TIMEOUT 300 LABELS interpose ENVIRONMENT
        "QEMU_SET_ENV=LD_PRELOAD=$<TARGET_FILE:numalock_preload>,NUMALOCK_LOCK=qspinlock-cna,NUMALOCK_TOPOLOGY=virtual:2")
    endforeach()
    set_tests_properties(interpose.semantics.glibc PROPERTIES TIMEOUT 120 LABELS interpose
      ENVIRONMENT "QEMU_SET_ENV=NL_SEMANTICS_UNDER_QEMU=1,NL_SEMANTICS_NO_RECYCLING=1")
    # the lock profile with stacks: the stack walk and the names (dladdr, or
    # libdw where the target has it) under the emulator
    add_test(NAME interpose.profile.stacks COMMAND nl_profiled 4 10)
    set_tests_properties(interpose.profile.stacks PROPERTIES TIMEOUT 300 LABELS interpose
      PASS_REGULAR_EXPRESSION "#1 +profiled_worker" ENVIRONMENT
      "QEMU_SET_ENV=LD_PRELOAD=$<TARGET_FILE:numalock_preload>,NUMALOCK_LOCK=hbo,NUMALOCK_STATS=1,NUMALOCK_STATS_STACKS=4")
  else()
    add_test(NAME interpose.symbols COMMAND ${NL_IP_DIR}/check_symbols.sh $<TARGET_FILE:numalock_preload>)
    add_test(NAME interpose.run_cli COMMAND ${NL_IP_DIR}/run_cli.sh $<TARGET_FILE:numalock_cli> ${NL_IP_BIN})
    add_test(NAME interpose.semantics.glibc COMMAND nl_semantics)
    # locks too large for the mutex live in a block it points to: force that path with a small lock
    add_test(NAME interpose.semantics.out_of_place
      COMMAND $<TARGET_FILE:numalock_cli> run --lock ttas -- $<TARGET_FILE:nl_semantics> --expect-preload)
    set_tests_properties(interpose.semantics.out_of_place PROPERTIES ENVIRONMENT NUMALOCK_PRELOAD_EXTERNAL=1)
    # the lock profile's names, stacks and JSON (profile_test.sh)
    add_test(NAME interpose.profile COMMAND ${NL_IP_DIR}/profile_test.sh $<TARGET_FILE:numalock_cli> ${NL_IP_BIN}
      $<IF:$<IN_LIST:NL_HAVE_LIBDW,$<TARGET_PROPERTY:numalock_preload,COMPILE_DEFINITIONS>>,libdw,dladdr>)
    set_tests_properties(interpose.symbols interpose.run_cli interpose.semantics.glibc interpose.semantics.out_of_place
      interpose.profile PROPERTIES TIMEOUT 120 LABELS interpose)
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
      # bad environment values (one line each, default used), and
      # pthread spin locks on LOCK at 1..32 threads, output equal to glibc's
      add_test(NAME interpose.env.${lock}
        COMMAND ${NL_IP_DIR}/env_test.sh $<TARGET_FILE:numalock_preload> ${lock} ${NL_IP_BIN})
      add_test(NAME interpose.spin.${lock}
        COMMAND ${NL_IP_DIR}/spin_test.sh $<TARGET_FILE:numalock_cli> ${lock} ${NL_IP_BIN})
      set_tests_properties(interpose.env.${lock} interpose.spin.${lock} PROPERTIES
        TIMEOUT 300 LABELS interpose SKIP_RETURN_CODE 77)
      # the program's objects on PTHREAD_STACK_MIN stacks (small_stack.c):
      # waiters that spin, park (NUMALOCK_WAIT=park:0:0) and pass the gate
      # (adaptive, 8 threads on fewer CPUs), every load sample reading the
      # cgroup files
      foreach(policy adaptive park:0:0)
        string(REPLACE ":" "_" pname ${policy})
        add_test(NAME interpose.small_stack.${lock}.${pname}
          COMMAND $<TARGET_FILE:numalock_cli> run --lock ${lock} --topology virtual:2 -- $<TARGET_FILE:nl_small_stack> 8)
        set_tests_properties(interpose.small_stack.${lock}.${pname} PROPERTIES TIMEOUT 300 LABELS interpose
          SKIP_REGULAR_EXPRESSION "cannot replace pthread mutexes"
          ENVIRONMENT "NUMALOCK_WAIT=${policy};NUMALOCK_PRELOAD_SAMPLE_ALL=1")
      endforeach()
    endforeach()
    # the read-write algorithms behind pthread rwlocks on small stacks
    foreach(rwlock cst-rwsem futex-rwlock)
      add_test(NAME interpose.small_stack.rwlock.${rwlock}
        COMMAND $<TARGET_FILE:numalock_cli> run --lock hbo --rwlock ${rwlock} --topology virtual:2 -- $<TARGET_FILE:nl_small_stack> 8)
      set_tests_properties(interpose.small_stack.rwlock.${rwlock} PROPERTIES TIMEOUT 300 LABELS interpose
        ENVIRONMENT "NUMALOCK_PRELOAD_SAMPLE_ALL=1")
    endforeach()
    # the stray-unlock check must catch a lock whose release breaks a free lock
    # when the preload trusts the release (its deliberately broken variant)
    add_test(NAME interpose.semantics.ticket_trusting_release
      COMMAND $<TARGET_FILE:numalock_cli> run --lock ticket -- $<TARGET_FILE:nl_semantics> --expect-preload)
    set_tests_properties(interpose.semantics.ticket_trusting_release PROPERTIES
      ENVIRONMENT NUMALOCK_PRELOAD_TRUST_RELEASE=1 PASS_REGULAR_EXPRESSION "the mutex is broken"
      TIMEOUT 120 LABELS interpose)
  endif()
endif()
