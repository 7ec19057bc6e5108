# Lock operations on small thread stacks (docs/ARCHITECTURE.md "Stack"):
# every registered lock on PTHREAD_STACK_MIN stacks through the library and
# through the preload library, and the static check of every lock path's
# frames against NL_STACK_BUDGET. Not in the ThreadSanitizer build (its
# runtime needs more stack than the locks do).
if(NOT NL_SANITIZE_THREAD)
  add_executable(test_small_stack test_small_stack.c)
  target_include_directories(test_small_stack PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(test_small_stack PRIVATE numalock_static)
  target_compile_options(test_small_stack PRIVATE ${NL_WARN})
  add_test(NAME small_stack COMMAND test_small_stack)
  set_tests_properties(small_stack PROPERTIES TIMEOUT 600 LABELS unit)

  find_package(Python3 COMPONENTS Interpreter)
  # (the host build checks it: the frames of a cross build are its own matter)
  if(NL_STACK_REPORT AND TARGET numalock_preload AND Python3_Interpreter_FOUND AND NOT CMAKE_CROSSCOMPILING)
    set(NL_OBJ_DIR ${CMAKE_BINARY_DIR}/CMakeFiles/numalock_obj.dir)
    set(NL_PRELOAD_OBJ_DIR ${CMAKE_BINARY_DIR}/src/interpose/CMakeFiles/numalock_preload.dir)
    # the locks that wrap glibc's own objects call pthread_*, which the
    # preload library replaces; it never runs them (nlp_interposable)
    add_test(NAME stack_usage COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/stack_usage.py
      --budget ${NL_STACK_BUDGET} --src ${CMAKE_SOURCE_DIR}/src --src ${CMAKE_SOURCE_DIR}/include
      --skip-source src/locks/pthread_mutex.c --skip-source src/locks/pthread_rwlock.c
      $<TARGET_FILE:numalock>=${NL_OBJ_DIR}
      $<TARGET_FILE:numalock_preload>=${NL_OBJ_DIR}:${NL_PRELOAD_OBJ_DIR})
    set_tests_properties(stack_usage PROPERTIES TIMEOUT 120 LABELS unit)
  endif()
endif()
