# Runs CMD with ARGS (a ;-list) and fails unless it exits with EXPECT_RC and its output (stdout
# and stderr together) matches EXPECT_REGEX. Used by ctest: cmake -DCMD=... -P expect_exit.cmake
if(NOT DEFINED CMD OR NOT DEFINED EXPECT_RC)
  message(FATAL_ERROR "expect_exit.cmake needs -DCMD=... and -DEXPECT_RC=...")
endif()
execute_process(COMMAND ${CMD} ${ARGS}
                RESULT_VARIABLE rc
                OUTPUT_VARIABLE out
                ERROR_VARIABLE out
                TIMEOUT 50)
message(STATUS "exit code ${rc}; output:\n${out}")
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "expected exit code ${EXPECT_RC}, got ${rc}")
endif()
if(DEFINED EXPECT_REGEX AND NOT out MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'")
endif()
