# Warnings for project code: on, and errors unless PROTUNER_WERROR is OFF. Third-party
# headers come in as SYSTEM includes so their warnings do not stop our build.
function(protuner_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(PROTUNER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
