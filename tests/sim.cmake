# The simulator (sim/, docs/SIMULATION.md): determinism, the CNA paper's ratio
# on the simulated 2-socket machine, a releasing core keeping its line, copies
# that serve only once they arrive, reads through the home one at a time,
# every registered lock, refusals
# (tests/sim_test.py). Where the simulator is built (x86-64 hosts).
if(TARGET numalock_sim)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    foreach(t determinism ratio keep inflight home every_lock refusals)
      add_test(NAME sim.${t} COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/sim_test.py
        $<TARGET_FILE:numalock_cli> ${t})
      set_tests_properties(sim.${t} PROPERTIES TIMEOUT 240 LABELS sim)
    endforeach()
  endif()
endif()
