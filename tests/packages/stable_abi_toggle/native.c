/* sabitoggle-native: a compiled program installed to the scripts folder. */
#include <stdio.h>

int main(void) {
    puts("native program ran");
    return 0;
}
