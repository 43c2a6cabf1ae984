# The engine's layers (docs/architecture.md): each folder of router_core/ is one static library
# that links only the layers below it, and no source may include a header of a layer its own
# layer does not link. CMake enforces the first; check_layers.cmake, run before anything
# compiles and again as the `layering` test, enforces the second.
#
#   switchyard_layer(NAME [DEPENDS layer...] [PRIVATE_DEPENDS layer...] SOURCES file...
#                    [PUBLIC lib...] [PRIVATE lib...])
#       A library `switchyard_NAME` from router_core/NAME/. Every layer in DEPENDS and
#       PRIVATE_DEPENDS must have been declared before, so the graph has no cycle by
#       construction. A layer's own sources may include the layers below it; the layers above it
#       see through it only what it depends on publicly.
#   switchyard_layer_rules(NAME ALLOWED layer... SOURCES file...)
#       Checks the includes of a folder outside router_core (the console's folders, the app) too.
#       NAME is the folder as includes name it: `app`, or `ui/traces` for "ui/traces/...".
#   switchyard_check_layers()
#       After the last layer: the check target every layer waits for, and the test.

set(SWITCHYARD_LAYER_CHECK_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake CACHE INTERNAL "")

function(_switchyard_record_layer name allowed sources)
    set_property(GLOBAL APPEND PROPERTY SWITCHYARD_LAYER_NAMES ${name})
    string(REPLACE ";" "," allowed_text "${allowed}")
    set(absolute "")
    foreach(source IN LISTS sources)
        get_filename_component(path "${source}" ABSOLUTE)
        # Only our own sources: generated ones (resources, moc) live in the build tree.
        string(FIND "${path}" "${PROJECT_BINARY_DIR}/" in_build)
        if(NOT in_build EQUAL 0 AND path MATCHES "\\.(h|cpp)$")
            list(APPEND absolute "${path}")
        endif()
    endforeach()
    string(REPLACE ";" "," sources_text "${absolute}")
    set_property(GLOBAL APPEND PROPERTY SWITCHYARD_LAYER_LINES
                 "${name}|${allowed_text}|${sources_text}")
    set_property(GLOBAL APPEND PROPERTY SWITCHYARD_LAYER_SOURCES ${absolute})
endfunction()

function(_switchyard_closure out)
    set(closure "")
    foreach(dependency IN LISTS ARGN)
        get_property(known GLOBAL PROPERTY SWITCHYARD_LAYER_CLOSURE_${dependency} SET)
        if(NOT known)
            message(FATAL_ERROR "a layer depends on ${dependency}, which is not declared below it")
        endif()
        get_property(below GLOBAL PROPERTY SWITCHYARD_LAYER_CLOSURE_${dependency})
        list(APPEND closure ${dependency} ${below})
    endforeach()
    list(REMOVE_DUPLICATES closure)
    set(${out} "${closure}" PARENT_SCOPE)
endfunction()

function(switchyard_layer name)
    cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "DEPENDS;PRIVATE_DEPENDS;SOURCES;PUBLIC;PRIVATE")
    _switchyard_closure(exported ${arg_DEPENDS})
    _switchyard_closure(own ${arg_DEPENDS} ${arg_PRIVATE_DEPENDS})
    set_property(GLOBAL PROPERTY SWITCHYARD_LAYER_CLOSURE_${name} "${exported}")

    add_library(switchyard_${name} STATIC ${arg_SOURCES})
    target_include_directories(switchyard_${name} PUBLIC ${PROJECT_SOURCE_DIR}/router_core)
    list(TRANSFORM arg_DEPENDS PREPEND switchyard_ OUTPUT_VARIABLE linked)
    list(TRANSFORM arg_PRIVATE_DEPENDS PREPEND switchyard_ OUTPUT_VARIABLE linked_privately)
    target_link_libraries(switchyard_${name} PUBLIC ${linked} ${arg_PUBLIC}
                          PRIVATE switchyard_warnings ${linked_privately} ${arg_PRIVATE})
    _switchyard_record_layer(${name} "${own}" "${arg_SOURCES}")
endfunction()

# The layers a folder outside router_core may include: `layers` and what they export.
function(switchyard_exported_layers out)
    _switchyard_closure(closure ${ARGN})
    set(${out} "${closure}" PARENT_SCOPE)
endfunction()

function(switchyard_layer_rules name)
    cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "ALLOWED;SOURCES")
    _switchyard_record_layer(${name} "${arg_ALLOWED}" "${arg_SOURCES}")
endfunction()

function(switchyard_check_layers)
    get_property(lines GLOBAL PROPERTY SWITCHYARD_LAYER_LINES)
    get_property(names GLOBAL PROPERTY SWITCHYARD_LAYER_NAMES)
    get_property(sources GLOBAL PROPERTY SWITCHYARD_LAYER_SOURCES)
    set(map ${PROJECT_BINARY_DIR}/switchyard_layers.txt)
    string(REPLACE ";" "\n" text "${lines}")
    file(WRITE ${map} "${text}\n")
    string(REPLACE ";" "," names_text "${names}")
    set(stamp ${PROJECT_BINARY_DIR}/switchyard_layers.stamp)
    add_custom_command(
        OUTPUT ${stamp}
        COMMAND ${CMAKE_COMMAND} -DLAYER_MAP=${map} -DLAYER_NAMES=${names_text}
                -P ${SWITCHYARD_LAYER_CHECK_SCRIPT}
        COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
        DEPENDS ${sources} ${map} ${SWITCHYARD_LAYER_CHECK_SCRIPT}
        COMMENT "Checking that every include goes down the layers"
        VERBATIM)
    add_custom_target(switchyard_check_layers ALL DEPENDS ${stamp})
    foreach(name IN LISTS names)
        if(TARGET switchyard_${name})
            add_dependencies(switchyard_${name} switchyard_check_layers)
        endif()
    endforeach()
    set(SWITCHYARD_LAYER_MAP ${map} PARENT_SCOPE)
    set(SWITCHYARD_LAYER_NAMES_TEXT ${names_text} PARENT_SCOPE)
endfunction()
